// The simulated cluster (see cluster_sim.h).
#include "cluster_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "input_error.h"
#include "job_info.h"
#include "sia_artifact.h"
#include "sia_policy.h"
#include "sim_job.h"

namespace pollux::sim {
namespace {

enum class Kind { kPollux, kTiresias, kOptimus, kSia };

Kind policy_kind(const std::string& name) {
  if (name == "pollux") return Kind::kPollux;
  if (name == "tiresias") return Kind::kTiresias;
  if (name == "optimus") return Kind::kOptimus;
  if (name == "sia") return Kind::kSia;
  throw std::runtime_error("unknown policy '" + name + "' (pollux, tiresias, optimus or sia)");
}

// Goodput-driven policies: the job adapts its batch, the agent fits models.
bool adaptive(Kind k) { return k == Kind::kPollux || k == Kind::kSia; }

// Sia's bootstrap (sia.py): a job with no throughput model on any type is
// worth the same on one GPU of every type (no estimate from ratios yet).
void sia_bootstrap(JobInfo& info, const SimJob& job) {
  if (job.max_profiled_replicas() > 0) return;
  for (SpeedupFn& f : info.speedup_by_type) f = [](int, int replicas) { return static_cast<double>(replicas); };
}

// The per-node GPU counts of a placement, in the order whose rotations
// index placements.csv. The artifact lists a Pollux allocation in node
// order, and a baseline's in the order its greedy placement took the nodes
// - most free GPUs first, each taken whole but the last - which is
// non-increasing in the counts.
std::vector<int> node_counts(const Placement& p, Kind kind) {
  std::vector<int> counts;
  for (const NodeShare& s : p) counts.push_back(s.gpus);
  if (kind != Kind::kPollux) std::stable_sort(counts.begin(), counts.end(), std::greater<int>());
  return counts;
}

// Which jobs interfere during the coming interval: distributed jobs (more
// than one node) that share any node with another distributed job.
std::vector<char> interfering(const std::vector<Placement>& alloc, int nodes) {
  std::vector<char> out(alloc.size(), 0);
  std::vector<int> distributed(static_cast<std::size_t>(nodes), 0);
  for (const Placement& p : alloc)
    if (p.size() > 1)
      for (const NodeShare& s : p) ++distributed[static_cast<std::size_t>(s.node)];
  for (std::size_t i = 0; i < alloc.size(); ++i) {
    if (alloc[i].size() < 2) continue;
    for (const NodeShare& s : alloc[i])
      if (distributed[static_cast<std::size_t>(s.node)] > 1) out[i] = 1;
  }
  return out;
}

PolicyOptions policy_options(const SimOptions& o) {
  PolicyOptions po = o.policy_options;
  po.interval = o.interval;
  po.restart_delay = o.restart_delay;
  return po;
}

}  // namespace

// The cluster's GPU types as the simulation sees them: each node's type,
// the true speed of each type per application, and - for the type-aware
// policy - the ratios it learns and what it is told about the nodes.
struct Hetero {
  std::vector<int> node_type;   // per node
  std::vector<GpuType> types;   // empty: one type, speed 1
  bool typed = false;           // the policy sees the types
  std::unique_ptr<TypeRatios> ratios;
  std::vector<std::vector<bool>> seen;  // per job: the pairs of types it told `ratios` (observe_fits)
  // Types with their own measured step times (GpuType::apps): one cache
  // per (type, application), made on first use.
  std::map<std::pair<int, std::string>, std::unique_ptr<StepTimeCache>> profiled;
  double speed(int node, const std::string& app) const {
    if (types.empty()) return 1.0;
    const GpuType& g = types[static_cast<std::size_t>(node_type[static_cast<std::size_t>(node)])];
    return g.apps != nullptr ? 1.0 : g.speed_of(app);
  }
  StepTimeCache* steps(int type, const std::string& app) {
    if (types.empty() || types[static_cast<std::size_t>(type)].apps == nullptr) return nullptr;
    std::unique_ptr<StepTimeCache>& c = profiled[{type, app}];
    if (c == nullptr) c = std::make_unique<StepTimeCache>(types[static_cast<std::size_t>(type)].apps->get(app));
    return c.get();
  }
};

// How long a re-allocation stalls `job`: --restart-delay, or with
// --sia-calibration Sia's simulator's checkpoint-restore time of its model.
static double restart_delay_of(const SimOptions& o, const SimJob& job) {
  return o.sia_calibration ? sia_calibration(job.app().name()).restart_delay : o.restart_delay;
}

// Moves job `job` to `p`: the profile slot is the placement's type (when
// the policy sees types), its speed the slowest node's; on a type with its
// own measured step times the job runs at those (a placement over several
// types, which only the type-agnostic policies make, at those of the type
// told slowest: every replica waits for the slowest at each all-reduce).
static void move_job(SimJob& job, const Placement& p, const std::vector<int>& counts, Hetero& h,
                     double restart_delay) {
  double speed = HUGE_VAL;
  for (const NodeShare& s : p) speed = std::min(speed, h.speed(s.node, job.app().name()));
  const int slot = h.typed && !p.empty() ? h.node_type[static_cast<std::size_t>(p.front().node)] : 0;
  StepTimeCache* steps = nullptr;
  if (!p.empty() && !h.types.empty()) {
    int slowest = h.node_type[static_cast<std::size_t>(p.front().node)];
    for (const NodeShare& s : p) {
      const int t = h.node_type[static_cast<std::size_t>(s.node)];
      if (h.types[static_cast<std::size_t>(t)].speed < h.types[static_cast<std::size_t>(slowest)].speed) slowest = t;
    }
    steps = h.steps(slowest, job.app().name());
  }
  job.reallocate(counts, restart_delay, slot, p.empty() ? 1.0 : speed, steps);
}

// A completed job that ran on several types tells the ratios what it saw.
static void learn_ratios(SimJob& job, std::size_t i, Hetero& h) {
  if (!h.typed) return;
  std::vector<std::optional<PerfParams>> fits;
  for (int t = 0; t < job.model_slots(); ++t) fits.push_back(job.perf_params(t));
  if (h.seen.size() <= i) h.seen.resize(i + 1);
  observe_fits(*h.ratios, fits, std::max(1, job.app().limits().min_atomic), h.seen[i]);
}

// sched/pollux's arrivals round (SimOptions::arrivals_tick): the policy
// sizes the submitted, incomplete jobs that hold no GPUs, in what the
// others leave; pollux_job_info's age rule is the plugin's
// (describe_elastic_job: at least restart_delay x (restarts + 1)).
static void arrivals_round(const Workload& workload, std::vector<SimJob>& jobs, const SimOptions& options,
                           const std::vector<NodeInfo>& all_nodes, double now, std::vector<Placement>& alloc,
                           Policy& policy, RunResult& result, Hetero& hetero) {
  std::vector<NodeInfo> nodes = all_nodes;
  std::vector<std::size_t> asked;
  std::vector<JobInfo> infos;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].complete()) {
      alloc[i].clear();
      continue;
    }
    for (const NodeShare& s : alloc[i]) nodes[static_cast<std::size_t>(s.node)].gpus -= s.gpus;
    if (jobs[i].submit_time() > now || !alloc[i].empty()) continue;
    asked.push_back(i);
    infos.push_back(pollux_job_info(jobs[i], workload.jobs[i], i, now, 0, options.restart_delay, true,
                                    options.min_nodes, hetero.typed ? hetero.ratios.get() : nullptr));
  }
  bool room = false;
  for (const NodeInfo& n : nodes) room = room || n.gpus > 0;
  if (asked.empty() || !room) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Placement> next = policy.optimize(infos, nodes, std::vector<Placement>(asked.size()), now);
  result.policy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++result.arrival_rounds;
  if (auto bad = check_allocation(infos, nodes, next, policy.options()))
    throw std::runtime_error("policy broke a constraint in an arrivals round at t=" +
                             std::to_string(static_cast<long long>(now)) + " s: " + *bad);
  for (std::size_t k = 0; k < asked.size(); ++k) {
    if (next[k].empty()) continue;
    move_job(jobs[asked[k]], next[k], node_counts(next[k], Kind::kPollux), hetero, restart_delay_of(options, jobs[asked[k]]));
    alloc[asked[k]] = std::move(next[k]);
  }
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = (static_cast<double>(v.size()) - 1) * q / 100.0;
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

void check_runnable(const Workload& workload, const SimOptions& options) {
  const int total_gpus = options.nodes * options.gpus_per_node;
  if (policy_kind(options.policy) != Kind::kTiresias) return;
  for (const WorkloadJob& w : workload.jobs)
    if (w.num_replicas > total_gpus)
      throw InputError(workload.path, w.line,
                       "job " + w.name + " asks for " + std::to_string(w.num_replicas) + " GPUs; the cluster has " +
                           std::to_string(total_gpus));
}

RunResult simulate(const Workload& workload, const AppCatalog& catalog, const SimOptions& options) {
  check_runnable(workload, options);
  if (options.arrivals_tick > 0 && policy_kind(options.policy) != Kind::kPollux)
    throw std::runtime_error("arrivals rounds are sched/pollux's: only with the pollux policy");
  if (options.arrivals_tick > 0 && std::fmod(options.interval, options.arrivals_tick) != 0)
    throw std::runtime_error("the arrivals tick must divide the interval");
  std::unique_ptr<Policy> policy = policy_kind(options.policy) == Kind::kSia
                                       ? std::make_unique<SiaPolicy>(policy_options(options), options.sia_lambda_n)
                                       : make_policy(options.policy, policy_options(options));
  if (policy == nullptr)
    throw std::runtime_error("policy '" + options.policy + "' is not available in this build of libgoodput");
  return simulate(workload, catalog, options, *policy);
}

RunResult simulate(const Workload& workload, const AppCatalog& catalog, const SimOptions& options, Policy& policy) {
  const Kind kind = policy_kind(options.policy);
  const PolicyOptions po = policy_options(options);
  // What every round's allocation is checked against: the policy's
  // options; the baselines have no interference avoidance and no node
  // limit per job (as in the paper), only capacity and their sizes.
  PolicyOptions checked = po;
  if (kind != Kind::kPollux) {
    checked.interference_avoidance = false;
    checked.max_nodes_per_job = options.nodes;
  }

  check_runnable(workload, options);
  Hetero hetero;
  std::vector<NodeInfo> nodes(static_cast<std::size_t>(options.nodes), NodeInfo{options.gpus_per_node});
  hetero.node_type.assign(nodes.size(), 0);
  if (!options.gpu_types.empty()) {
    std::size_t n = 0;
    std::vector<double> seed;
    std::vector<bool> told;
    for (std::size_t t = 0; t < options.gpu_types.size(); ++t) {
      const GpuType& g = options.gpu_types[t];
      seed.push_back(g.speed);
      told.push_back(g.speed_told);
      for (int k = 0; k < g.nodes && n < nodes.size(); ++k) {
        if (g.gpus_per_node > 0) nodes[n].gpus = g.gpus_per_node;
        hetero.node_type[n++] = static_cast<int>(t);
      }
    }
    int total = 0;
    for (const GpuType& g : options.gpu_types) total += g.nodes;
    if (total != options.nodes)
      throw std::runtime_error("the GPU types have " + std::to_string(total) + " nodes; the cluster has " +
                               std::to_string(options.nodes));
    hetero.types = options.gpu_types;
    hetero.typed = ((kind == Kind::kPollux && options.type_aware) || kind == Kind::kSia) && options.gpu_types.size() > 1;
    if (hetero.typed) {
      hetero.ratios = std::make_unique<TypeRatios>(seed, told);
      for (std::size_t k = 0; k < nodes.size(); ++k) nodes[k].type = hetero.node_type[k];
    }
  }
  std::map<std::string, std::unique_ptr<StepTimeCache>> caches;
  std::vector<SimJob> jobs;
  jobs.reserve(workload.jobs.size());
  double last_submit = 0;
  for (const WorkloadJob& w : workload.jobs) {
    const Application& app = catalog.get(w.application);
    auto& cache = caches[w.application];
    if (cache == nullptr) cache = std::make_unique<StepTimeCache>(app);
    const long long fixed = adaptive(kind) ? app.spec().fixed_batch : w.batch_size;
    jobs.emplace_back(w.name, w.submit_time, *cache, fixed, hetero.typed ? static_cast<int>(hetero.types.size()) : 1);
    if (options.sia_calibration) jobs.back().set_slowdown(sia_calibration(w.application).slowdown);
    last_submit = std::max(last_submit, w.submit_time);
  }

  std::vector<Placement> alloc(jobs.size());
  RunResult result;
  result.workload = workload.name;
  double now = 0;
  std::size_t incomplete = jobs.size();
  std::vector<std::size_t> active;
  std::vector<JobInfo> infos;
  std::vector<Placement> current;
  const double tick = options.arrivals_tick > 0 ? options.arrivals_tick : options.interval;
  double next_full = 0;
  while (incomplete > 0) {
    const std::vector<char> shared = interfering(alloc, options.nodes);
    std::size_t completed = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (shared[i] && !jobs[i].complete()) result.interfering_gpu_seconds += placement_gpus(alloc[i]) * tick;
      const bool was = jobs[i].complete();
      jobs[i].step(tick, shared[i] ? options.interference : 0.0);
      if (!was && jobs[i].complete()) {
        ++completed;
        learn_ratios(jobs[i], i, hetero);
      }
    }
    now += tick;
    if (now + 1e-6 < next_full + options.interval) {  // between full rounds: arrivals only
      bool arrived = completed > 0;
      for (const SimJob& j : jobs) arrived = arrived || (j.submit_time() > now - tick && j.submit_time() <= now);
      if (arrived) arrivals_round(workload, jobs, options, nodes, now, alloc, policy, result, hetero);
      incomplete = 0;
      for (const SimJob& j : jobs) incomplete += !j.complete();
      continue;
    }
    next_full = now;
    ++result.rounds;

    active.clear();
    infos.clear();
    current.clear();
    incomplete = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (jobs[i].complete()) continue;
      ++incomplete;
      if (jobs[i].submit_time() > now) continue;
      const WorkloadJob& w = workload.jobs[i];
      // As sched/pollux's learner, each round: a job with fits on two types
      // tells the ratios once per pair (and ends their exploration).
      learn_ratios(jobs[i], i, hetero);
      active.push_back(i);
      current.push_back(alloc[i]);
      switch (kind) {
        case Kind::kPollux:
          infos.push_back(pollux_job_info(jobs[i], w, i, now, placement_gpus(alloc[i]), options.restart_delay, false,
                                          options.min_nodes, hetero.typed ? hetero.ratios.get() : nullptr));
          break;
        case Kind::kSia:
          infos.push_back(pollux_job_info(jobs[i], w, i, now, placement_gpus(alloc[i]), options.restart_delay, false,
                                          0, hetero.typed ? hetero.ratios.get() : nullptr, false));
          sia_bootstrap(infos.back(), jobs[i]);
          break;
        case Kind::kTiresias: infos.push_back(tiresias_job_info(jobs[i], w, i, now)); break;
        case Kind::kOptimus:
          infos.push_back(optimus_job_info(jobs[i], w, i, now, *caches[w.application], options.gpus_per_node));
          break;
      }
    }
    if (!active.empty()) {
      if (auto* sia = dynamic_cast<SiaPolicy*>(&policy)) {
        std::vector<char> mid(active.size());
        for (std::size_t k = 0; k < active.size(); ++k) mid[k] = jobs[active[k]].restarting();
        sia->pin_restarting(std::move(mid));
        if (options.sia_calibration) {
          std::vector<double> penalty(active.size());
          for (std::size_t k = 0; k < active.size(); ++k)
            penalty[k] = sia_calibration(jobs[active[k]].app().name()).policy_penalty;
          sia->set_restart_penalties(std::move(penalty));
        }
      }
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<Placement> next = policy.optimize(infos, nodes, current, now);
      result.policy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (next.size() != active.size())
        throw std::runtime_error("policy " + options.policy + " returned " + std::to_string(next.size()) +
                                 " placements for " + std::to_string(active.size()) + " jobs");
      if (auto bad = check_allocation(infos, nodes, next, checked))
        throw std::runtime_error("policy " + options.policy + " broke a constraint at t=" +
                                 std::to_string(static_cast<long long>(now)) + " s: " + *bad);
      // Jobs no longer active (complete) give their GPUs back.
      std::vector<Placement> updated(jobs.size());
      for (std::size_t k = 0; k < active.size(); ++k) {
        const std::size_t i = active[k];
        if (!(next[k] == alloc[i])) move_job(jobs[i], next[k], node_counts(next[k], kind), hetero, restart_delay_of(options, jobs[i]));
        updated[i] = std::move(next[k]);
      }
      alloc.swap(updated);
    }
    if (options.record_timeline) {
      result.times.push_back(now);
      std::vector<int> row(jobs.size());
      for (std::size_t i = 0; i < jobs.size(); ++i) row[i] = placement_gpus(alloc[i]);
      result.gpus.push_back(std::move(row));
    }
    if (incomplete > 0 && now > last_submit + options.max_runtime_after_last_submit)
      throw std::runtime_error(workload.path + ": " + std::to_string(incomplete) +
                               " jobs still incomplete at t=" + std::to_string(static_cast<long long>(now)) +
                               " s under policy " + options.policy);
  }

  std::vector<double> jcts;
  double first_submit = HUGE_VAL, last_completion = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    SimJob& j = jobs[i];
    JobOutcome o;
    o.name = j.name();
    o.application = workload.jobs[i].application;
    o.submit_time = j.submit_time();
    o.completion_time = j.completion_time();
    o.jct = o.completion_time - o.submit_time;
    o.restarts = j.restarts();
    o.gpu_seconds = j.attained_service();
    jcts.push_back(o.jct);
    first_submit = std::min(first_submit, o.submit_time);
    last_completion = std::max(last_completion, o.completion_time);
    result.gpu_hours += o.gpu_seconds / 3600.0;
    result.restarts_per_job += o.restarts;
    result.fits += j.fits();
    result.jobs.push_back(std::move(o));
  }
  for (const auto& [name, cache] : caches) result.model_lookups += cache->model_lookups();
  result.avg_jct = std::accumulate(jcts.begin(), jcts.end(), 0.0) / static_cast<double>(jcts.size());
  result.p99_jct = percentile(jcts, 99);
  result.makespan = last_completion - first_submit;
  result.restarts_per_job /= static_cast<double>(jobs.size());
  return result;
}

}  // namespace pollux::sim

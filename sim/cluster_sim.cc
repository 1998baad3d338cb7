// The simulated cluster (see cluster_sim.h).
#include "cluster_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "input_error.h"
#include "job_info.h"
#include "sia_artifact.h"
#include "pollux/interference.h"
#include "pollux/policies.h"
#include "sched_round.h"
#include "sim_job.h"
#include "time_limit.h"

namespace pollux::sim {
namespace {

// The policy's table entry (pollux/policies.h): what each job is told, how
// it places, whether jobs adapt.
const PolicyEntry& entry_of(const std::string& name) {
  if (const PolicyEntry* e = find_policy(name)) return *e;
  throw std::runtime_error("unknown policy '" + name + "' (" + policy_names(nullptr) + ")");
}

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
std::vector<int> node_counts(const Placement& p, const PolicyEntry& policy) {
  std::vector<int> counts;
  for (const NodeShare& s : p) counts.push_back(s.gpus);
  if (policy.greedy_placement) std::stable_sort(counts.begin(), counts.end(), std::greater<int>());
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

// GPUs held per node.
std::vector<int> used_gpus(const std::vector<Placement>& alloc, std::size_t nodes) {
  std::vector<int> used(nodes, 0);
  for (const Placement& p : alloc)
    for (const NodeShare& s : p) used[static_cast<std::size_t>(s.node)] += s.gpus;
  return used;
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

// How long a re-allocation stalls `job`: --restart-delay (its first start:
// --start-delay, where given), or with --sia-calibration Sia's simulator's
// checkpoint-restore time of its model; none for a job of recorded duration.
static double restart_delay_of(const SimOptions& o, const SimJob& job) {
  if (job.recorded()) return 0;  // its recorded time holds its start (a node's boot still delays it)
  if (o.sia_calibration) return sia_calibration(job.app().name()).restart_delay;
  return !job.started() && o.start_delay >= 0 ? o.start_delay : o.restart_delay;
}

// Moves job `job` to `p`: the profile slot is the placement's type (when
// the policy sees types), its speed the slowest node's; on a type with its
// own measured step times the job runs at those (a placement over several
// types, which only the type-agnostic policies make, at those of the type
// told slowest: every replica waits for the slowest at each all-reduce).
static void move_job(SimJob& job, const Placement& p, const std::vector<int>& counts, Hetero& h,
                     double restart_delay) {
  if (job.recorded()) return job.reallocate(counts, restart_delay);  // no application: no speed, no profile
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

// SimOptions::in_flight: the k-th end (in time) of any job submits the
// k-th held job (workload order), at that end's time. Ends come in time
// order across steps, so the jobs submitted before keep their times.
static void submit_held(std::vector<SimJob>& jobs, std::size_t first_held) {
  std::vector<double> ends;
  for (const SimJob& j : jobs)
    if (j.complete()) ends.push_back(j.completion_time());
  std::sort(ends.begin(), ends.end());
  for (std::size_t k = 0; k < ends.size() && first_held + k < jobs.size(); ++k)
    if (jobs[first_held + k].submit_time() == HUGE_VAL) jobs[first_held + k].submit(ends[k]);
}

// sched/pollux's round (its periodic rounds, and with
// SimOptions::arrivals_tick its arrivals rounds): the plugin's own round (sched/round.h: plan_round)
// on the simulated cluster (sched_round.h); the jobs it starts or requeues
// move where it placed them. Under --autoscale (`pool`) the round sees each
// node's power state; the nodes it powers down or resumes (goodput) are,
// and Slurm's power saving (queue and goodput) resumes the nodes its jobs
// use (a job placed there waits for the boot) and suspends the idle ones.
// Returns the round's utility (sched::RoundResult::utility).
static double sched_round(std::vector<SimJob>& jobs, const SimOptions& options, SimCluster& cluster,
                          const sched::Params& params, double now, bool arrivals_only, std::vector<Placement>& alloc,
                          Policy& policy, const PolicyEntry& entry, RunResult& result, Hetero& hetero,
                          const sched::RoundRules& rules, NodePool* pool) {
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].complete()) alloc[i].clear();  // its GPUs are free
  if (pool != nullptr) {
    cluster.power.resize(cluster.nodes.size());
    cluster.boot_wait.resize(cluster.nodes.size());
    for (std::size_t n = 0; n < cluster.nodes.size(); ++n) {
      cluster.power[n] = pool->power(static_cast<int>(n), now);
      cluster.boot_wait[n] = pool->wait({NodeShare{static_cast<int>(n), 1}}, now);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const SimRoundPlan plan = plan_sim_round(jobs, alloc, cluster, params, policy, arrivals_only, now,
                                           hetero.typed ? hetero.ratios.get() : nullptr, rules);
  result.policy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (arrivals_only && plan.policy_ran) ++result.arrival_rounds;
  // The plugin logs an answer it cannot use and keeps every size; in the
  // simulator a policy that breaks its contract stops the run.
  if (!plan.error.empty())
    throw std::runtime_error("policy " + options.policy + " broke a constraint in " +
                             (arrivals_only ? "an arrivals" : "a") + " round at t=" +
                             std::to_string(static_cast<long long>(now)) + " s: " + plan.error);
  if (pool != nullptr) pool->apply(plan.power_down, plan.power_up, now);
  for (const auto& [i, p] : plan.moves) {
    const double boot = pool != nullptr ? pool->wait(p, now) : 0.0;
    move_job(jobs[i], p, node_counts(p, entry), hetero, restart_delay_of(options, jobs[i]) + boot);
    alloc[i] = p;
  }
  if (pool != nullptr && options.autoscale.mode != ScaleMode::kFixed)
    pool->follow_allocation(used_gpus(alloc, cluster.nodes.size()), now);
  return plan.utility;
}

// --autoscale: the round's time, the nodes paid and up, the utility.
static void record_scale(RunResult& result, const NodePool& pool, double now, double utility) {
  result.scale_times.push_back(now);
  result.nodes_on.push_back(pool.on_count());
  result.nodes_up.push_back(pool.up_count(now));
  result.utility.push_back(utility);
}

// SimOptions::record_timeline: the round's time and each job's GPUs.
static void record(RunResult& result, double now, const std::vector<Placement>& alloc) {
  result.times.push_back(now);
  std::vector<int> row(alloc.size());
  for (std::size_t i = 0; i < alloc.size(); ++i) row[i] = placement_gpus(alloc[i]);
  result.gpus.push_back(std::move(row));
}

// SimOptions::max_runtime_after_last_submit.
static void give_up_if_stuck(const Workload& workload, const SimOptions& options, std::size_t incomplete, double now,
                             double last_submit) {
  if (incomplete > 0 && now > last_submit + options.max_runtime_after_last_submit)
    throw std::runtime_error(workload.path + ": " + std::to_string(incomplete) + " jobs still incomplete at t=" +
                             std::to_string(static_cast<long long>(now)) + " s under policy " + options.policy);
}

// Backfill's time limits (time_limit.h): each job's runtime alone at its
// workload size and batch, as this run would run it, times the factor.
static std::vector<double> backfill_time_limits(const Workload& workload, const std::vector<SimJob>& jobs,
                                                std::map<std::string, std::unique_ptr<StepTimeCache>>& caches,
                                                const SimOptions& o) {
  std::map<std::tuple<std::string, int, long long>, double> runtime;
  std::vector<double> limits;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const WorkloadJob& w = workload.jobs[i];
    // A history's own limit (0: unlimited, the policy's year, as Slurm's INFINITE).
    if (w.time_limit >= 0 || w.recorded) {
      limits.push_back(std::max(w.time_limit, 0.0));
      continue;
    }
    auto [it, fresh] = runtime.try_emplace({w.application, w.num_replicas, w.batch_size}, 0.0);
    if (fresh)
      it->second = rigid_runtime(*caches[w.application], w.num_replicas, w.batch_size, o.gpus_per_node,
                                 restart_delay_of(o, jobs[i]),
                                 o.sia_calibration ? sia_calibration(w.application).slowdown : 1.0);
    limits.push_back(user_time_limit(it->second, o.time_limit_factor));
  }
  return limits;
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
  const JobInput input = entry_of(options.policy).input;
  const bool rigid = input == JobInput::kRigid || input == JobInput::kRigidTimeLimit;
  for (const WorkloadJob& w : workload.jobs)
    if (w.recorded && !rigid)
      throw InputError(workload.path, w.line,
                       "job " + w.name + " has no known application (it runs at its recorded size and duration): "
                           "only --policy " + policy_names([](const PolicyEntry& e) {
                             return e.input == JobInput::kRigid || e.input == JobInput::kRigidTimeLimit;
                           }) + " run such jobs");
  if (!rigid) return;
  for (const WorkloadJob& w : workload.jobs)
    if (w.num_replicas > total_gpus)
      throw InputError(workload.path, w.line,
                       "job " + w.name + " asks for " + std::to_string(w.num_replicas) + " GPUs; the cluster has " +
                           std::to_string(total_gpus));
}

RunResult simulate(const Workload& workload, const AppCatalog& catalog, const SimOptions& options) {
  check_runnable(workload, options);
  const PolicyEntry& entry = entry_of(options.policy);
  if (options.arrivals_tick > 0 && !entry.scheduler)
    throw std::runtime_error("arrivals rounds are sched/pollux's: only with the policy it runs (" +
                             policy_names([](const PolicyEntry& e) { return e.scheduler; }) + ")");
  if (options.arrivals_tick > 0 && std::fmod(options.interval, options.arrivals_tick) != 0)
    throw std::runtime_error("the arrivals tick must divide the interval");
  if (options.autoscale.mode != ScaleMode::kOff && (options.arrivals_tick > 0 || !options.gpu_types.empty()))
    throw std::runtime_error("auto-scaling is simulated on a cluster of one GPU type without arrivals rounds");
  if (options.autoscale.mode == ScaleMode::kGoodput && !entry.scheduler)
    throw std::runtime_error("goodput auto-scaling is sched/pollux's: only with " +
                             policy_names([](const PolicyEntry& e) { return e.scheduler; }));
  if (!entry.missing.empty())
    throw std::runtime_error("policy '" + options.policy + "' is not available: libgoodput was " +
                             std::string(entry.missing));
  // With arrivals rounds the policy is the plugin's: Slurm grants GPUs
  // per node uniformly (sched::policy_options), and plan_round refuses
  // any other size.
  PolicyOptions policy_options = options.policy_options;
  if (options.arrivals_tick > 0) policy_options.uniform_gpus_per_node = true;
  std::unique_ptr<Policy> policy = make_policy(options.policy, policy_options);
  return simulate(workload, catalog, options, *policy);
}

RunResult simulate(const Workload& workload, const AppCatalog& catalog, const SimOptions& options, Policy& policy) {
  const PolicyEntry& entry = entry_of(options.policy);
  // What every round's allocation is checked against: the policy's
  // options; the baselines have no interference avoidance and no node
  // limit per job (as in the paper), only capacity and their sizes.
  PolicyOptions checked = options.policy_options;
  if (entry.greedy_placement) {
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
    hetero.typed = (entry.types == GpuTypeUse::kRequired || (entry.types == GpuTypeUse::kAware && options.type_aware)) &&
                   options.gpu_types.size() > 1;
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
    // Beyond the first in_flight jobs: submitted when a job's end makes room.
    const bool held = options.in_flight > 0 && jobs.size() >= static_cast<std::size_t>(options.in_flight);
    last_submit = std::max(last_submit, w.submit_time);
    if (w.recorded) {
      jobs.emplace_back(w.name, held ? HUGE_VAL : w.submit_time, w.duration);
      continue;
    }
    const Application& app = catalog.get(w.application);
    auto& cache = caches[w.application];
    if (cache == nullptr) cache = std::make_unique<StepTimeCache>(app);
    const long long fixed = entry.adaptive ? app.spec().fixed_batch : w.batch_size;
    jobs.emplace_back(w.name, held ? HUGE_VAL : w.submit_time, *cache, fixed,
                      hetero.typed ? static_cast<int>(hetero.types.size()) : 1);
    if (options.sia_calibration) jobs.back().set_slowdown(sia_calibration(w.application).slowdown);
    jobs.back().set_end_delay(options.end_delay);
    jobs.back().set_last_epoch(w.last_epoch);
  }

  // sched/pollux's policy (the table's scheduler) runs in sched/pollux's
  // round on this cluster (sched_round.h), every run of it: the paper's,
  // typed clusters, auto-scaling (goodput: the core's
  // pollux_autoscale=goodput). Its rules are the plugin's but where
  // sim_rules says. Every other policy (not sched/pollux's) takes the
  // loop below.
  const bool core_round = entry.scheduler;
  SimCluster cluster{nodes, {}, options.min_nodes, {}, {}};
  if (hetero.typed)
    for (const GpuType& g : hetero.types) cluster.gpu_types.push_back(g.name);
  sched::Params params = sim_params(options.penalty(), options.interval);
  if (options.autoscale.mode == ScaleMode::kGoodput) {
    params.autoscale = sched::AutoscaleMode::kGoodput;
    params.utility_band = options.autoscale.band;
  }
  const sched::RoundRules rules = sim_rules(options.arrivals_tick > 0, policy);

  const std::vector<double> limits =
      entry.input == JobInput::kRigidTimeLimit ? backfill_time_limits(workload, jobs, caches, options) : std::vector<double>{};

  std::vector<Placement> alloc(jobs.size());
  std::optional<NodePool> pool;
  if (options.autoscale.mode != ScaleMode::kOff) pool.emplace(options.nodes, options.autoscale);
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
    if (pool) pool->pay(tick);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (shared[i] && !jobs[i].complete()) result.interfering_gpu_seconds += placement_gpus(alloc[i]) * tick;
      const bool was = jobs[i].complete();
      jobs[i].step(tick, shared[i] ? options.interference : 0.0);
      if (!was && jobs[i].complete()) {
        ++completed;
        learn_ratios(jobs[i], i, hetero);
      }
    }
    if (completed > 0 && options.in_flight > 0) submit_held(jobs, static_cast<std::size_t>(options.in_flight));
    now += tick;
    // Between full rounds: arrivals only, unless a job's end freed GPUs
    // that a submitted job may take: sched/pollux then brings the full
    // round forward (freed_gpus.h).
    bool waiting = false;
    for (const SimJob& j : jobs) waiting = waiting || (!j.complete() && j.submit_time() <= now);
    if (now + 1e-6 < next_full + options.interval && !(completed > 0 && waiting)) {
      bool arrived = false;
      for (const SimJob& j : jobs) arrived = arrived || (j.submit_time() > now - tick && j.submit_time() <= now);
      if (arrived)
        sched_round(jobs, options, cluster, params, now, true, alloc, policy, entry, result, hetero, rules, nullptr);
      incomplete = 0;
      for (const SimJob& j : jobs) incomplete += !j.complete();
      continue;
    }
    next_full = now;
    ++result.rounds;
    if (core_round) {
      // sched/pollux's periodic round.
      incomplete = 0;
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (jobs[i].complete()) continue;
        ++incomplete;
        // Every job told before the round, as sched/pollux's learner is
        // (learn_type_ratios); the loop below tells them job by job.
        if (jobs[i].submit_time() <= now) learn_ratios(jobs[i], i, hetero);
      }
      const double utility =
          incomplete > 0 ? sched_round(jobs, options, cluster, params, now, false, alloc, policy, entry, result,
                                       hetero, rules, pool ? &*pool : nullptr)
                         : -1.0;
      if (pool) record_scale(result, *pool, now, utility);
      if (options.record_timeline) record(result, now, alloc);
      give_up_if_stuck(workload, options, incomplete, now, last_submit);
      continue;
    }

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
      switch (entry.input) {
        case JobInput::kElastic:  // the table's only elastic policy is sched/pollux's: core_round
          throw std::logic_error("policy " + options.policy + " is elastic but not sched/pollux's");
        case JobInput::kElasticWholeLife:
          infos.push_back(pollux_job_info(jobs[i], w, i, now, placement_gpus(alloc[i]), options.penalty(),
                                          0, hetero.typed ? hetero.ratios.get() : nullptr, false));
          sia_bootstrap(infos.back(), jobs[i]);
          infos.back().restarting = jobs[i].restarting();
          if (options.sia_calibration) infos.back().restart_delay = sia_calibration(jobs[i].app().name()).policy_penalty;
          break;
        case JobInput::kRigid: infos.push_back(tiresias_job_info(jobs[i], w, i, now)); break;
        case JobInput::kRigidTimeLimit: infos.push_back(backfill_job_info(jobs[i], w, i, now, limits[i])); break;
        case JobInput::kOracle:
          infos.push_back(optimus_job_info(jobs[i], w, i, now, *caches[w.application], options.gpus_per_node));
          break;
      }
    }
    // Auto-scaling (fixed or queue: goodput is sched/pollux's, above): every
    // node is offered; under queue (Slurm's power saving) a job placed on
    // a down node waits for it to boot.
    if (!active.empty()) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<Placement> next = policy.optimize(infos, nodes, current, now);
      result.policy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (next.size() != active.size())
        throw std::runtime_error("policy " + options.policy + " returned " + std::to_string(next.size()) +
                                 " placements for " + std::to_string(active.size()) + " jobs");
      if (auto bad = check_allocation(infos, nodes, next, checked))
        throw std::runtime_error("policy " + options.policy + " broke a constraint at t=" +
                                 std::to_string(static_cast<long long>(now)) + " s: " + *bad);
      if (pool && options.autoscale.mode == ScaleMode::kQueue) pool->follow_allocation(used_gpus(next, nodes.size()), now);
      // Jobs no longer active (complete) give their GPUs back.
      std::vector<Placement> updated(jobs.size());
      for (std::size_t k = 0; k < active.size(); ++k) {
        const std::size_t i = active[k];
        if (!(next[k] == alloc[i]))
          move_job(jobs[i], next[k], node_counts(next[k], entry), hetero,
                   restart_delay_of(options, jobs[i]) + (pool ? pool->wait(next[k], now) : 0.0));
        updated[i] = std::move(next[k]);
      }
      alloc.swap(updated);
    } else if (pool && options.autoscale.mode == ScaleMode::kQueue) {
      pool->follow_allocation(std::vector<int>(nodes.size(), 0), now);
    }
    if (pool) record_scale(result, *pool, now, -1.0);  // (the baselines are told no speedups)
    if (options.record_timeline) record(result, now, alloc);
    give_up_if_stuck(workload, options, incomplete, now, last_submit);
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
    o.epochs = static_cast<int>(j.epoch_ends().size());
    o.epoch_ends = j.epoch_ends();
    if (!limits.empty()) o.time_limit = limits[i];
    jcts.push_back(o.jct);
    first_submit = std::min(first_submit, o.submit_time);
    last_completion = std::max(last_completion, o.completion_time);
    result.gpu_hours += o.gpu_seconds / 3600.0;
    result.restarts_per_job += o.restarts;
    result.fits += j.fits();
    result.jobs.push_back(std::move(o));
  }
  for (const auto& [name, cache] : caches) result.model_lookups += cache->model_lookups();
  if (pool) {
    result.node_hours = pool->node_hours();
    result.cost = result.node_hours * options.autoscale.node_price;
  }
  result.avg_jct = std::accumulate(jcts.begin(), jcts.end(), 0.0) / static_cast<double>(jcts.size());
  result.p99_jct = percentile(jcts, 99);
  result.makespan = last_completion - first_submit;
  result.restarts_per_job /= static_cast<double>(jobs.size());
  return result;
}

}  // namespace pollux::sim

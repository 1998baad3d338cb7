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
#include "sim_job.h"

namespace pollux::sim {
namespace {

enum class Kind { kPollux, kTiresias, kOptimus };

Kind policy_kind(const std::string& name) {
  if (name == "pollux") return Kind::kPollux;
  if (name == "tiresias") return Kind::kTiresias;
  if (name == "optimus") return Kind::kOptimus;
  throw std::runtime_error("unknown policy '" + name + "' (pollux, tiresias or optimus)");
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

// SimOptions::min_nodes, as sched/pollux passes a partition's MinNodes: a
// job not yet profiled at that scale may still take one GPU per node.
static void apply_min_nodes(JobInfo& info, const SimOptions& options) {
  if (options.min_nodes <= 1) return;
  info.min_nodes = options.min_nodes;
  info.max_replicas = std::max(info.max_replicas, options.min_nodes);
}

// sched/pollux's arrivals round (SimOptions::arrivals_tick): the policy
// sizes the submitted, incomplete jobs that hold no GPUs, in what the
// others leave; as in the plugin, each counts as at least one restart
// delay old (Pollux's restart factor is 0 at age 0).
static void arrivals_round(const Workload& workload, std::vector<SimJob>& jobs, const SimOptions& options,
                           const std::vector<NodeInfo>& all_nodes, double now, std::vector<Placement>& alloc,
                           Policy& policy, RunResult& result) {
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
    JobInfo info = pollux_job_info(jobs[i], workload.jobs[i], i, now);
    info.age = std::max(info.age, options.restart_delay);
    apply_min_nodes(info, options);
    infos.push_back(std::move(info));
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
    jobs[asked[k]].reallocate(node_counts(next[k], Kind::kPollux), options.restart_delay);
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
  std::unique_ptr<Policy> policy = make_policy(options.policy, policy_options(options));
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
  std::map<std::string, std::unique_ptr<StepTimeCache>> caches;
  std::vector<SimJob> jobs;
  jobs.reserve(workload.jobs.size());
  double last_submit = 0;
  for (const WorkloadJob& w : workload.jobs) {
    const Application& app = catalog.get(w.application);
    auto& cache = caches[w.application];
    if (cache == nullptr) cache = std::make_unique<StepTimeCache>(app);
    const long long fixed = kind == Kind::kPollux ? app.spec().fixed_batch : w.batch_size;
    jobs.emplace_back(w.name, w.submit_time, *cache, fixed);
    last_submit = std::max(last_submit, w.submit_time);
  }

  const std::vector<NodeInfo> nodes(static_cast<std::size_t>(options.nodes), NodeInfo{options.gpus_per_node});
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
      completed += !was && jobs[i].complete();
    }
    now += tick;
    if (now + 1e-6 < next_full + options.interval) {  // between full rounds: arrivals only
      bool arrived = completed > 0;
      for (const SimJob& j : jobs) arrived = arrived || (j.submit_time() > now - tick && j.submit_time() <= now);
      if (arrived) arrivals_round(workload, jobs, options, nodes, now, alloc, policy, result);
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
      active.push_back(i);
      current.push_back(alloc[i]);
      switch (kind) {
        case Kind::kPollux:
          infos.push_back(pollux_job_info(jobs[i], w, i, now));
          apply_min_nodes(infos.back(), options);
          break;
        case Kind::kTiresias: infos.push_back(tiresias_job_info(jobs[i], w, i, now)); break;
        case Kind::kOptimus:
          infos.push_back(optimus_job_info(jobs[i], w, i, now, *caches[w.application], options.gpus_per_node));
          break;
      }
    }
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
      // Jobs no longer active (complete) give their GPUs back.
      std::vector<Placement> updated(jobs.size());
      for (std::size_t k = 0; k < active.size(); ++k) {
        const std::size_t i = active[k];
        if (!(next[k] == alloc[i])) jobs[i].reallocate(node_counts(next[k], kind), options.restart_delay);
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

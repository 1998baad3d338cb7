// sched/pollux's round on the simulated cluster (see sched_round.h).
#include "sched_round.h"

#include <algorithm>
#include <optional>

#include "job_info.h"
#include "sched/job_transitions.h"
#include "sched/round.h"

namespace pollux::sim {
namespace {

// The signal the simulated agents announce (SIGUSR1 on Linux), one of
// pollux_resize_signals' defaults.
constexpr int kResizeSignal = 10;

// What the job's hint would say: its measures, its current fit's model
// and, on a typed cluster, the type it ran on and its fits on the others.
sched::JobInput job_input(SimJob& job, const SimCluster& cluster) {
  sched::JobInput in;
  static_cast<AgentMeasures&>(in) = job.measures();
  // Announced as each run starts (no hint latency); none once its training
  // is done (SimJob::ending: its program is ending, nothing can checkpoint
  // it), so the round leaves it be, as a moldable job.
  in.resize_signal = job.ending() ? 0 : kResizeSignal;
  in.hint_restarts = job.restarts();
  in.immediate_checkpoint = true;
  in.attained_service = job.attained_service();  // its whole life's, which the simulator knows
  std::shared_ptr<const SpeedupFunction> speedup = job.speedup_function();
  if (speedup == nullptr) return in;
  sched::JobModel m;
  m.speedup = std::move(speedup);
  m.perf = *job.perf_params();
  m.grad = *job.grad_stats();
  m.limits = job.app().limits();
  if (!cluster.gpu_types.empty()) {
    m.gpu_type = cluster.gpu_types[static_cast<std::size_t>(job.slot())];
    for (int t = 0; t < job.model_slots(); ++t)
      if (t != job.slot())
        if (const std::optional<PerfParams>& p = job.perf_params(t))
          m.type_perf.emplace_back(cluster.gpu_types[static_cast<std::size_t>(t)], *p);
  }
  in.model = std::move(m);
  return in;
}

}  // namespace

sched::Params sim_params(double restart_delay, double interval) {
  sched::Params p;
  p.restart_penalty = restart_delay;
  p.interval = interval;
  return p;
}

sched::RoundRules sim_rules(bool arrivals_rounds, const Policy& policy) {
  sched::RoundRules rules;
  rules.uniform_placements = arrivals_rounds || policy.options().uniform_gpus_per_node;
  return rules;
}

SimRoundPlan plan_sim_round(std::vector<SimJob>& jobs, const std::vector<Placement>& alloc, const SimCluster& cluster,
                            const sched::Params& params, Policy& policy, bool arrivals_only, double now,
                            const TypeRatios* ratios, const sched::RoundRules& rules) {
  sched::Snapshot snap;
  snap.now = now;
  snap.gpu_types = cluster.gpu_types;
  int gpus_per_node = 0;
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n) {
    sched::NodeSnapshot node;
    node.name = "node" + std::to_string(n);
    node.gpus = cluster.nodes[n].gpus;
    node.type = cluster.gpu_types.empty() ? 0 : cluster.nodes[n].type;
    gpus_per_node = std::max(gpus_per_node, node.gpus);
    snap.nodes.push_back(std::move(node));
  }
  std::vector<std::size_t> index;  // snapshot job -> job index
  std::vector<sched::JobInput> inputs;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    SimJob& job = jobs[i];
    if (job.complete() || job.submit_time() > now) continue;
    sched::ElasticJobSnapshot j;
    j.job_id = static_cast<std::uint32_t>(i + 1);
    j.submit_time = job.submit_time();
    j.restarts = job.restarts();
    j.range = {std::max(1, cluster.min_nodes), static_cast<int>(cluster.nodes.size()), gpus_per_node};
    const int cap = max_job_gpus(job.app());
    if (cap < j.range.max_gpus()) j.max_gpus_limit = cap;
    j.current = alloc[i];
    j.running = !alloc[i].empty();
    if (j.running) {
      j.start_time = job.run_start();
      sched::JobState st = sched::adopted_state(j.range, j.start_time, j.submit_time, sched::Why::kStart);
      sched::run_at(st, sched::to_alloc(j.current, snap.nodes), j.start_time);
      j.state = st;
    } else {
      j.held_by_pollux = true;  // the plugin holds every job it gives no GPUs
      j.hold_text = sched::hold_reason_for(sched::Why::kWait);
      if (job.restarts() > 0 || job.measures().max_profiled_replicas > 0) {
        j.state = sched::adopted_state(j.range, now, j.submit_time, sched::Why::kWait);
      }
    }
    index.push_back(i);
    inputs.push_back(job_input(job, cluster));
    snap.jobs.push_back(std::move(j));
  }
  SimRoundPlan plan;
  if (snap.jobs.empty()) return plan;
  const sched::RoundResult r = sched::plan_round(snap, inputs, params, &policy, arrivals_only, ratios, rules);
  plan.policy_ran = r.policy_ran;
  plan.error = r.error;
  for (const sched::JobDecision& d : r.decisions)
    if (d.action == sched::Action::kRelease || d.action == sched::Action::kRequeue)
      plan.moves.emplace_back(index[d.job], d.placement);
  return plan;
}

}  // namespace pollux::sim

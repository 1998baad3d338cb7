// sched/pollux's round on the simulated cluster: pollux-sim builds the
// scheduling core's Snapshot and JobInputs (sched/round.h) from its nodes
// and jobs, runs the very function the plugin's round thread runs
// (plan_round), and returns what the round decides for the simulated
// cluster to carry out. Nothing here decides: it translates.
//
// The translation, as the plugin's snapshot (plugin/sched_pollux/snapshot.cc)
// and hint reading (sched/hints.h) would give it:
// - a node: its GPUs (named node<N>, always up and usable), its GPU type on
//   a typed cluster;
// - a submitted, incomplete job: an elastic job of range
//   max(1, min_nodes)..nodes x gpus_per_node, its most GPUs limited to the
//   application's cap (kMaxJobReplicas, ncf's 1) like a QOS limit; running
//   on its placement (state run) or held by sched/pollux without GPUs
//   (state held once it ran; not yet seen before);
// - its JobInput: the agent's measures (SimJob::measures), the model of its
//   current fit and gradient statistics (none before its first sample), on
//   a typed cluster the type it ran on and its fits on the others, the
//   GPU-seconds of its whole life (JobInput::attained_service); an agent
//   that announces SIGUSR1 the moment each run starts (an *elastic* job:
//   the simulated agent has no hint latency) and checkpoints the moment it
//   is signalled (JobInput::immediate_checkpoint: a resize is a requeue in
//   the round that decides it).
// The round's rules are sched/pollux's but where sim_rules says (the
// paper's runs place as their policy does: sched::RoundRules).
#ifndef POLLUX_SIM_SCHED_ROUND_H
#define POLLUX_SIM_SCHED_ROUND_H

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "pollux/policy.h"
#include "pollux/typed_goodput.h"
#include "sched/params.h"
#include "sched/round.h"
#include "sim_job.h"

namespace pollux::sim {

/// The simulated cluster as the round sees it.
struct SimCluster {
  std::vector<NodeInfo> nodes;         ///< GPUs of each node (NodeInfo::type: its GPU type)
  std::vector<std::string> gpu_types;  ///< names of the types the policy sees (empty: untyped)
  int min_nodes = 0;                   ///< SimOptions::min_nodes
};

/// What one round decided for the simulated cluster.
struct SimRoundPlan {
  /// (job index, placement): what the cluster carries out - pending jobs
  /// the round releases at a size (sched::Action::kRelease), running jobs
  /// it requeues at their new size (kRequeue; empty: preempted); each
  /// stalls for its restart.
  std::vector<std::pair<std::size_t, Placement>> moves;
  bool policy_ran = false;
  std::string error;  ///< why the policy's answer was not used ("" when it was, or it did not run)
};

/// The core's parameters a simulation runs with: the defaults, with
/// pollux_restart_penalty = `restart_delay` and pollux_interval = `interval`.
sched::Params sim_params(double restart_delay, double interval);

/// Runs sched::plan_round over the submitted (by `now`), incomplete jobs
/// of `jobs` (their placements `alloc`, index as `jobs`) with `policy`;
/// `ratios` and `rules` as plan_round's (the learnt speeds of a typed
/// cluster, or null; sim_rules).
SimRoundPlan plan_sim_round(std::vector<SimJob>& jobs, const std::vector<Placement>& alloc, const SimCluster& cluster,
                            const sched::Params& params, Policy& policy, bool arrivals_only, double now,
                            const TypeRatios* ratios, const sched::RoundRules& rules = {});

/// The round's rules for a simulation with `policy`: sched/pollux's, but
/// for the placements, which are uniform with `arrivals_rounds` (the
/// plugin's rounds: Slurm's sizes) and otherwise only when the policy
/// places so (PolicyOptions::uniform_gpus_per_node; the paper's runs do not).
sched::RoundRules sim_rules(bool arrivals_rounds, const Policy& policy);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_SCHED_ROUND_H

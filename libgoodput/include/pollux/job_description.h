// What a scheduler tells the Pollux policy about one elastic job: the one
// rule that turns a job's state (age, restarts, the scale it has been
// profiled at, its size range and limits) into the policy's JobInfo.
// sched/pollux (sched/round.cc) and pollux-sim (sim) both
// call it, so that the simulator models the plugin by construction.
#ifndef POLLUX_JOB_DESCRIPTION_H
#define POLLUX_JOB_DESCRIPTION_H

#include <cstdint>
#include <vector>

#include "pollux/policy.h"

namespace pollux {

/// What a job's agent measured of it that the job description reads (the
/// hint's fields of these names, doc/hint-format.md). The base of the hint
/// (pollux/hint.h), of sched/pollux's JobInput and of ElasticJobState, so
/// that a field added here travels from the agent to the policy's JobInfo
/// without a copy by hand at each step.
struct AgentMeasures {
  int max_profiled_replicas = 0; ///< the most GPUs any hint has profiled
  /// Seconds a restart has been seen to cost this job (checkpoint to the
  /// first step after the restore: the hint's restart_seconds); 0: not
  /// seen yet, the scheduler's restart penalty stands in.
  double restart_seconds = 0;
};

/// A scheduler's knowledge of one elastic job in one round: what its agent
/// measured (AgentMeasures) and what the scheduler knows.
struct ElasticJobState : AgentMeasures {
  std::uint64_t id = 0;
  double submit_time = 0;        ///< seconds (also the origin of its age)
  double now = 0;                ///< the round's time
  int restarts = 0;              ///< re-allocations so far (Slurm requeues included)
  /// Running, and its current run began with a restart: when that run
  /// started (0: not running, or its first run).
  double run_start = 0;
  double attained_service = 0;   ///< GPU-seconds
  SpeedupFn speedup;             ///< empty: no model yet (linear)
  /// Per-GPU-type speedups (JobInfo::speedup_by_type); empty: untyped.
  std::vector<SpeedupFn> speedup_by_type;
  int held_gpus = 0;             ///< GPUs it holds (or is promised) now
  int max_gpus_by_batch = 0;     ///< M_max / m_min of its model; 0: unknown
  int min_gpus = 0;              ///< its request's smallest size (0: any)
  int max_gpus = 1;              ///< its request's largest size
  int max_gpus_limit = 0;        ///< a further cap (QOS, association); 0: none
  int requested_gpus = 1;        ///< the user-given size
  int min_nodes = 0;             ///< 0 or 1: any
  int max_nodes = 0;             ///< below the policy's own limit; 0: none
  std::vector<bool> allowed_nodes;  ///< empty: every node
};

/// A job's D, the one rule: the larger of `restart_penalty` (the
/// scheduler's, the least a restart is taken to cost: it also covers the
/// scheduler's requeue and start, which a job cannot measure) and its
/// measured `restart_seconds` once seen (finite, > 0).
double job_restart_delay(double restart_seconds, double restart_penalty) noexcept;

/// The policy's view of `job`, with D = job_restart_delay(restart_seconds,
/// restart_penalty) and JobInfo::restart_delay = D, which the policies
/// read as it is:
/// - age = now - submit_time (never negative); in an arrivals round (only
///   jobs holding no GPUs are sized, promptly) at least D x (restarts + 1),
///   so that Pollux's restart factor max(age - restarts D, 0) / (age + D)
///   is not 0 for a job submitted or requeued a moment ago: placing a job
///   that holds nothing restarts nothing.
/// - with run_start (a run that began with a restart, r = now - run_start
///   seconds ago): when max(r - D, 0) / (r + D), the factor of a job r
///   seconds old with one restart, is below the whole life's, age = r and
///   restarts = 1: a decision is not reversed within D seconds of the
///   restart it caused, and soon after only for a gain that outweighs
///   another (over its whole life a job hours old would pay next to
///   nothing for a resize seconds after its last one).
/// - max_replicas = min(max_gpus, max(2 x max_profiled_replicas, held, 1),
///   max(max_gpus_by_batch, held) when known, max_gpus_limit when set),
///   never below min_gpus: a job grows as its hints show that it scales and
///   never has to shrink for want of a hint.
/// - min_replicas = min_gpus; the node limits and allowed nodes as given.
JobInfo describe_elastic_job(const ElasticJobState& job, double restart_penalty, bool arrivals_round);

}  // namespace pollux

#endif  // POLLUX_JOB_DESCRIPTION_H

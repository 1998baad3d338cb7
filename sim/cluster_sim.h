// The simulated cluster: runs one workload under one policy, the way the
// Pollux OSDI'21 artifact's simulator does.
//
// Every `interval` seconds: each job runs for the interval on the
// placement it holds (a distributed job - more than one node - that shares
// a node with another distributed job is slowed by `interference`); the
// clock advances; the jobs submitted by then and not complete are given to
// the policy with their current placements; each job whose placement
// changed is re-allocated (and stalls for the restart delay). The run ends
// when every job is complete. JCT = completion time - submission time.
#ifndef POLLUX_SIM_CLUSTER_SIM_H
#define POLLUX_SIM_CLUSTER_SIM_H

#include <map>
#include <string>
#include <vector>

#include "application.h"
#include "autoscaler.h"
#include "pollux/policy.h"
#include "time_limit.h"
#include "workload.h"

namespace pollux::sim {

/// One GPU type of a heterogeneous cluster (SimOptions::gpu_types).
struct GpuType {
  std::string name;
  int nodes = 0;
  /// GPUs on each of its nodes (0: SimOptions::gpus_per_node).
  int gpus_per_node = 0;
  /// The name of this type's measured step times in Sia's artifact (aws,
  /// rtx, dgx-ext...: placements-<profile>.csv); with `apps` set (pollux-sim
  /// --sia-artifact) the jobs on this type run at those step times, not at
  /// the traces' scaled by a speed.
  std::string profile;
  const AppCatalog* apps = nullptr;
  /// What the scheduler is told (TypeRatios' seed): its compute speed
  /// relative to the traces' GPUs (T_grad there / T_grad on this type).
  double speed = 1.0;
  /// Whether the scheduler is told `speed` (TypeRatios' `known`); false:
  /// a seed of 1 it explores.
  bool speed_told = true;
  /// The true compute speed per application (default: `speed`); the
  /// simulated jobs run at it.
  std::map<std::string, double> app_speed;
  double speed_of(const std::string& app) const {
    auto it = app_speed.find(app);
    return it != app_speed.end() ? it->second : speed;
  }
};

struct SimOptions {
  std::string policy = "pollux";  ///< a name of pollux/policies.h's table
  int nodes = 16;
  int gpus_per_node = 4;
  double interval = 60;           ///< seconds between scheduling rounds (whole seconds)
  double interference = 0.0;      ///< slowdown of interfering distributed jobs, [0, 1)
  /// Seconds a re-allocation stalls a job; also the restart penalty of
  /// the job descriptions (the least D a policy is told) unless
  /// `restart_penalty` is given.
  double restart_delay = 30;
  /// sched/pollux's pollux_restart_penalty: the least D a policy is told
  /// (< 0: `restart_delay`, the paper's simulator, where they are one).
  double restart_penalty = -1;
  /// Seconds a job's first start stalls it: from the round that gives it
  /// GPUs to its first step (< 0: `restart_delay`). A replay's Slurm
  /// start and process start (doc/simulator.md).
  double start_delay = -1;
  /// Seconds from a job's last step to its end: its JCT counts them and
  /// it holds its GPUs until then (a replay's process exit and Slurm's
  /// completion; 0: none, the paper's simulator).
  double end_delay = 0;
  double penalty() const noexcept { return restart_penalty >= 0 ? restart_penalty : restart_delay; }
  PolicyOptions policy_options;
  bool record_timeline = false;   ///< keep GPUs per job per round (for plots)
  /// sched/pollux's arrivals rounds (0: off, the paper's periodic rounds
  /// only; either way every Pollux round is the plugin's plan_round on the
  /// simulated cluster, sched_round.h), the policy placing uniformly. Jobs run in steps of this many seconds, and
  /// after a step in which a job was submitted the arrivals round sizes
  /// only the jobs holding no GPUs, in the GPUs the others leave (no
  /// running job is re-allocated); full rounds still come every
  /// `interval`. Must divide `interval`.
  double arrivals_tick = 0;
  /// Pollux: every job spans at least this many nodes when it runs (as a
  /// Slurm partition's MinNodes does through JobInfo::min_nodes; 0: any).
  int min_nodes = 0;
  /// Several GPU types: nodes of gpu_types[0] first, then [1]...; their
  /// sum must equal `nodes`. Empty: one type, the traces' own.
  std::vector<GpuType> gpu_types;
  /// Pollux with several types: the type-aware policy (per-type models,
  /// one type per job); false: today's type-agnostic Pollux (one model per
  /// job, placements over any GPUs, a mixed one paced by its slowest).
  bool type_aware = true;
  /// Sia's simulator's calibration for every policy (sia_artifact.h):
  /// per-model slowdowns and checkpoint-restore times.
  bool sia_calibration = false;
  /// --policy backfill: each job's time limit is its runtime alone at its
  /// workload size and batch times this, rounded up (time_limit.h).
  double time_limit_factor = kDefaultTimeLimitFactor;
  /// Cloud auto-scaling (autoscaler.h; off: every node always there,
  /// nothing paid). Not with arrivals rounds or several GPU types.
  AutoscaleOptions autoscale;
  /// At most this many of the workload's jobs submitted and incomplete at
  /// once, as a study's driver keeps K trials in flight (0: no limit, the
  /// workload's submit times). The first K are submitted at their workload
  /// times; each later one (workload order) when a job's end makes room, at
  /// that end's time.
  int in_flight = 0;
  /// Give up (std::runtime_error) when jobs are still running this long
  /// after the last submission.
  double max_runtime_after_last_submit = 365 * 86400.0;
};

struct JobOutcome {
  std::string name;
  std::string application;
  double submit_time = 0;
  double completion_time = 0;
  double jct = 0;
  int restarts = 0;
  double gpu_seconds = 0;  ///< attained service
  double time_limit = 0;   ///< backfill: the job's time limit (seconds); 0 otherwise
  int epochs = 0;          ///< epochs trained (fewer than the application's: stopped, WorkloadJob::last_epoch)
  std::vector<double> epoch_ends;  ///< when each epoch ended (seconds from the run's start)
};

struct RunResult {
  std::string workload;
  std::vector<JobOutcome> jobs;  ///< workload order
  double avg_jct = 0;
  double p99_jct = 0;            ///< linear between order statistics (NumPy's default)
  double makespan = 0;           ///< last completion - first submission
  double gpu_hours = 0;          ///< sum of attained service
  double restarts_per_job = 0;
  int rounds = 0;
  int arrival_rounds = 0;        ///< arrivals rounds that ran the policy (SimOptions::arrivals_tick)
  long long fits = 0;            ///< throughput-model fits done by the agents
  long long model_lookups = 0;   ///< step-time lookups outside every measurement
  double policy_seconds = 0;     ///< wall time inside Policy::optimize (with arrivals_tick: inside plan_sim_round, the whole round)
  /// GPU-seconds held by distributed jobs while they shared a node with
  /// another distributed job (slowed by `interference` when it is > 0).
  double interfering_gpu_seconds = 0;
  /// With autoscale: node-hours paid (booting or up), their cost, and per
  /// full round its time, the nodes paid and up, and the cluster's utility
  /// (cluster_utility over the paid GPUs; -1 for a policy told no speedups).
  double node_hours = 0;
  double cost = 0;
  std::vector<double> scale_times;
  std::vector<int> nodes_on;
  std::vector<int> nodes_up;
  std::vector<double> utility;
  /// With record_timeline: round times and, per round, GPUs of each job.
  std::vector<double> times;
  std::vector<std::vector<int>> gpus;
};

/// Slurm's default bf_interval: pollux-sim's --interval under --policy
/// backfill unless given.
inline constexpr int kBackfillInterval = 30;

/// InputError (naming the workload line) for a job the policy could never
/// run: under Tiresias or backfill, a job asking for more GPUs than the cluster has.
void check_runnable(const Workload& workload, const SimOptions& options);

/// Runs `workload`. `catalog` must have loaded every application the
/// workload uses. Throws InputError for a job the policy could never run
/// (Tiresias or backfill asking for more GPUs than the cluster has), std::runtime_error
/// when the policy is unknown or breaks its contract.
RunResult simulate(const Workload& workload, const AppCatalog& catalog, const SimOptions& options);

/// The same with a given policy object (options.policy still names the
/// table entry that says what it is told of each job: its input).
RunResult simulate(const Workload& workload, const AppCatalog& catalog, const SimOptions& options, Policy& policy);

/// q-th percentile (q in [0, 100]) of `v`, linear between order statistics.
double percentile(std::vector<double> v, double q);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_CLUSTER_SIM_H

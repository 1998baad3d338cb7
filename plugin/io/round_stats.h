// SPDX-License-Identifier: GPL-2.0-or-later
// sched/pollux's round statistics, as sdiag keeps backfill's: counters
// since slurmctld started and since the last reset (pollux-status --reset),
// the last, mean and largest duration of each phase of a round, and the
// cluster as the last round left it (GPUs by kind of job, one row per
// elastic job). Built outside slurmctld's locks from what a round already
// has (its snapshot, inputs, decisions); no Slurm here.
#ifndef POLLUX_SCHED_ROUND_STATS_H
#define POLLUX_SCHED_ROUND_STATS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/round.h"
#include "spool_space.h"

namespace pollux::sched {

/// The three kinds of round (round_thread.cc): periodic (the policy sizes
/// every job), arrivals (the prompt one after a submission or an end) and
/// transition (no policy: checkpoints acknowledged, jobs started).
enum class RoundKind { kPeriodic, kArrivals, kTransition };
const char* round_kind_name(RoundKind kind) noexcept;  // "periodic", "arrivals", "transition"

/// Durations of one phase, milliseconds.
struct PhaseTimes {
  long long count = 0;
  double last_ms = 0, sum_ms = 0, max_ms = 0;
  void add(double ms) noexcept;
  double mean_ms() const noexcept { return count > 0 ? sum_ms / count : 0; }
};

/// Counters over a span of rounds (since slurmctld started, or since the last reset).
struct RoundTotals {
  double since = 0;  ///< Unix time the span began
  std::map<std::string, long long> rounds;  ///< by round_kind_name
  /// "snapshot" (lock hold to copy), "plan" (hints and policy, no lock),
  /// "enact" (lock hold to apply; only rounds that changed something), "total".
  std::map<std::string, PhaseTimes> phases;
  long long jobs_considered = 0;  ///< elastic jobs in the rounds' snapshots, summed
  /// Decisions that change something in Slurm, by kind: start, grow,
  /// shrink, move, preempt (a signal to checkpoint for it), requeue (the
  /// resize carried out), hold.
  std::map<std::string, long long> decisions;
  std::map<std::string, long long> reasons;  ///< the same decisions by the job's why (job_comment.h)
  long long refused_sizes = 0;     ///< sizes Slurm refused (BadConstraints, job_limits_check)
  long long enact_errors = 0;      ///< errors applying decisions
  std::map<std::string, long long> hints_rejected;  ///< by HintReader's reason (hints.h)
  long long checkpoint_acks = 0;      ///< resizes requeued on the agent's acknowledgement
  long long checkpoint_timeouts = 0;  ///< resizes requeued at pollux_checkpoint_timeout without one
  long long nodes_powered_down = 0;   ///< by goodput auto-scaling (pollux_autoscale=goodput)
  long long nodes_powered_up = 0;     ///< resumed ahead of need by goodput auto-scaling
};

/// GPUs of the cluster's GPU nodes by who holds them.
struct GpuUse {
  int total = 0;
  int elastic = 0;   ///< running elastic jobs whose agents resize on a signal
  int moldable = 0;  ///< running elastic jobs sized once (no resize signal listener)
  int rigid = 0;     ///< rigid jobs (running, suspended, completing)
  int suspended = 0;  ///< suspended elastic jobs (Slurm keeps their GPUs)
  int idle = 0;      ///< the rest
  /// Slurm's power saving: GPUs of nodes powered down and of nodes booting
  /// (held by jobs that wait for the boot, or idle). Not a kind beside the
  /// others: a part of the GPUs counted above.
  int powered_down = 0;
  int booting = 0;
};

/// The GPUs of one GPU type's nodes by who holds them.
struct TypeGpuUse {
  std::string type;  ///< Slurm's type name, "untyped" for untyped GPUs beside typed ones
  GpuUse use;
};

/// One elastic job as the last round left it.
struct JobRow {
  std::uint32_t job_id = 0;
  std::uint32_t uid = 0;
  std::string user;       ///< name (the uid when it has none)
  std::string partition;
  std::string phase;      ///< phase_name()
  std::string why;        ///< the last decision or why it has no GPUs
  std::string cap;        ///< running: what keeps it from growing (JobView::cap), "" when not said
  std::string action;     ///< this round's action_name()
  int gpus = 0, nodes = 0;
  long long batch = 0;
  double goodput = 0, efficiency = 0, speedup = 0;
  bool has_model = false;
  bool running = false;
  int restarts = 0;
  double restart_seconds = 0;  ///< JobInput::restart_seconds (0: not reported)
  /// On a cluster of two or more GPU types: the type of the GPUs it holds
  /// or is promised (gpu_type_name()); empty when none, or on a cluster of
  /// one type or none (whose output stays as it was before types).
  std::string gpu_type;
};

/// What one round did, apart from what its snapshot, inputs and decisions say.
struct RoundRecord {
  RoundKind kind = RoundKind::kTransition;
  double snapshot_ms = 0, plan_ms = 0, total_ms = 0;
  bool enacted = false;  ///< the write locks were taken
  double enact_ms = 0;
  int enact_errors = 0;
  int refused_sizes = 0;  ///< sizes Slurm refused at enactment or in its main loop this round
  std::map<std::string, long long> hints_rejected;  ///< HintReader::take_rejections()
  std::string spool_dir;  ///< pollux_spool_dir
  SpoolSpace spool;       ///< its space this round (spool_space.h)
  int nodes_powered_down = 0;  ///< nodes Slurm took to power down this round (enact_power.h)
  int nodes_powered_up = 0;    ///< nodes Slurm took to resume ahead of need this round
};

/// The accumulator: one per slurmctld, fed once per round by the round thread.
class RoundStats {
 public:
  explicit RoundStats(double now);

  /// Adds a round. `inputs[i]` belongs to `snap.jobs[i]`, as plan_round() takes them.
  void add(const Snapshot& snap, const std::vector<JobInput>& inputs, const RoundResult& result,
           const RoundRecord& record);

  /// Starts the since-reset counters afresh (sdiag -r).
  void reset(double now);

  const RoundTotals& since_start() const noexcept { return start_; }
  const RoundTotals& since_reset() const noexcept { return reset_; }
  const GpuUse& gpus() const noexcept { return gpus_; }
  /// One per GPU type, in Snapshot::gpu_types' order, on a cluster of two
  /// or more types; empty otherwise.
  const std::vector<TypeGpuUse>& gpus_by_type() const noexcept { return gpus_by_type_; }
  const std::vector<JobRow>& jobs() const noexcept { return jobs_; }
  /// Goodput auto-scaling as the last periodic round with it on decided
  /// (active false: never on since slurmctld started, or turned off since).
  const AutoscalePlan& autoscale() const noexcept { return autoscale_; }
  double last_round() const noexcept { return last_round_; }
  /// The spool and its space at the last round.
  const std::string& spool_dir() const noexcept { return spool_dir_; }
  const SpoolSpace& spool() const noexcept { return spool_; }
  /// The sum of the running elastic jobs' goodput (examples/s) at their
  /// sizes as the SystemComment shows them (a job checkpointing for a
  /// resize at its new size).
  double cluster_goodput() const noexcept;

 private:
  RoundTotals start_, reset_;
  GpuUse gpus_;
  std::vector<TypeGpuUse> gpus_by_type_;
  std::map<std::uint32_t, std::string> users_;  // uid -> name, looked up once
  std::vector<JobRow> jobs_;
  AutoscalePlan autoscale_;
  double last_round_ = 0;
  std::string spool_dir_;
  SpoolSpace spool_;
};

/// GPUs by kind of job: rigid and idle from the snapshot, elastic and
/// moldable from the kind the round gave each running job, suspended from
/// the suspended elastic jobs. With `type`
/// (an index into snap.gpu_types) only the nodes of that type and the jobs
/// running on them.
GpuUse gpu_use(const Snapshot& snap, const RoundResult& result, int type = -1);

/// A GPU type as the statistics show it: Slurm's name, "untyped" for
/// untyped GPUs, as the SystemComment's type= (job_comment.h).
std::string gpu_type_name(const std::string& type);

/// The user name of a uid (getpwuid_r), the number when it has none.
std::string user_name(std::uint32_t uid);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_ROUND_STATS_H

// SPDX-License-Identifier: GPL-2.0-or-later
// What sched/pollux keeps about each elastic job, in the job's
// SystemComment: a field that only slurmctld writes (neither users nor
// administrators can update it), that `scontrol show job` prints and that
// Slurm saves with the job's state, so the plugin's view of every job
// survives a slurmctld restart without a state file of its own.
//
//   pollux: gpus=8 nodes=2 goodput=1234/s eff=0.81 speedup=5.2 bsz=2048x1 gns=512 why=grow | state=run range=1-4x4 alloc=2x4@n1,n2 since=1700000000 submit=1699999000
//   (and limit=MIN used=SECONDS run=START with a time limit; from=NxG@nodes,
//   the allocation it runs at, in state=ckpt)
//
// Left of " | ": the scheduler's view for people (doc/man/sched_pollux.5).
// Right of it: the state the plugin reads back each round.
#ifndef POLLUX_SCHED_JOB_COMMENT_H
#define POLLUX_SCHED_JOB_COMMENT_H

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "elastic.h"
#include "job_state.h"

namespace pollux::sched {

/// How the SystemComment, the statistics and pollux-status name untyped
/// GPUs beside typed ones (Slurm's own type name for them is empty).
inline constexpr std::string_view kUntypedGpuType = "untyped";

/// A job's size: `nodes` nodes (`node_list`, comma-separated names) with
/// `gpus_per_node` GPUs on each. Empty = no GPUs.
struct Alloc {
  int nodes = 0;
  int gpus_per_node = 0;
  std::string node_list;

  int gpus() const noexcept { return nodes * gpus_per_node; }
  Size size() const noexcept { return {nodes, gpus_per_node}; }
  bool empty() const noexcept { return nodes == 0; }
  bool operator==(const Alloc& o) const noexcept {
    return nodes == o.nodes && gpus_per_node == o.gpus_per_node && node_list == o.node_list;
  }
  bool operator!=(const Alloc& o) const noexcept { return !(*this == o); }
};

/// The state part.
struct JobState {
  ElasticRange range;
  Phase phase = Phase::kHeld;
  Alloc alloc;       ///< the decided size (kStarting, kCheckpointing) or the current one
  /// kCheckpointing: the allocation it runs at until its requeue (from=;
  /// empty in every other phase, and in comments older versions wrote),
  /// what the log names when someone else's requeue ends that run.
  Alloc from;
  double since = 0;   ///< Unix time the phase began
  double submit = 0;  ///< Unix time of submission (Slurm resets its own at each requeue)
  Why why;           ///< the last decision (start, grow, shrink, ...), why it has no GPUs, or how it ended
  /// The job's time limit over its whole life, minutes (0: none), and the
  /// seconds its earlier runs used: Slurm counts a time limit per run, so
  /// sched/pollux gives each run what is left (limit=, used= when set).
  long long limit = 0;
  long long used = 0;
  /// With a limit: Unix time the running job's current run started (0: none
  /// running). A run that ends without sched/pollux's requeue (Slurm's after
  /// a node failure, an operator's `scontrol requeue`) is added to `used`
  /// from it when a round next sees the job pending (run= when set).
  double run = 0;
};

/// The view part, for people.
struct JobView {
  int gpus = 0;
  int nodes = 0;
  bool has_model = false;   ///< false: no valid hint yet, linear speedup assumed
  double goodput = 0;       ///< examples per second at the decided size
  double efficiency = 0;    ///< statistical efficiency at the chosen batch
  double speedup = 0;       ///< over one GPU
  long long batch = 0;      ///< total batch size M
  int micro_steps = 0;      ///< micro-steps per optimizer step (accumulation + 1)
  double noise_scale = 0;   ///< gradient noise scale B_noise (0: unknown)
  /// "elastic" (its agent listens for resizes) or "moldable" (sized at its
  /// start, then left alone); empty: not said.
  std::string kind;
  /// Pending after sched/pollux's requeue, promised GPUs: when it starts
  /// as far as sched/pollux can tell (Unix time; 0: not such a job), as
  /// squeue --start shows it (round.h: requeue_start).
  double start = 0;
  /// On a cluster with typed GPUs (gres types): the type of the GPUs it
  /// holds or is promised (empty: none; "untyped" shown for untyped GPUs
  /// beside typed ones), and its goodput estimate, examples per second, at
  /// that size (at one GPU when it has none) on each type it has a model
  /// for: type=h100 goodput_by_type=a100:120,h100:310.
  std::string gpu_type;
  std::vector<std::pair<std::string, double>> goodput_by_type;
  /// Running: what keeps it from growing (cap=, round.h: not_grown(); or
  /// spool-full: its agent cannot write its hint); none when not said.
  Why cap;
};

std::string format_comment(const JobView& view, const JobState& state);

/// The view's cap= of a comment format_comment() wrote (none when it has
/// none, or an unknown word).
Why parse_comment_cap(std::string_view comment);

/// The view's type= and goodput_by_type= of a comment format_comment()
/// wrote (empty when it has none: an untyped cluster, an older comment);
/// nullopt when one of them is damaged.
struct CommentTypes {
  std::string gpu_type;
  std::vector<std::pair<std::string, double>> goodput_by_type;
};
std::optional<CommentTypes> parse_comment_types(std::string_view comment);

/// A Unix time (rounded up to the second) as Slurm shows times: local,
/// YYYY-MM-DDTHH:MM:SS.
std::string slurm_time(double t);

/// The time limit to give the job's next run, minutes: what is left of its
/// whole-life limit (state.limit) after its earlier runs (state.used), at
/// least 1; 0 when it has none.
long long next_run_limit(const JobState& state);

/// The state of a SystemComment written by format_comment(); nullopt for
/// anything else (an empty or foreign comment, a damaged field). A why=
/// word this version does not know (one a newer version wrote, or a damaged
/// one) is read as none, and `problem` (when given) says so for the log:
/// the rest of the state still holds.
std::optional<JobState> parse_comment(std::string_view comment, std::string* problem = nullptr);

/// The prefix every comment sched/pollux writes starts with.
inline constexpr std::string_view kCommentPrefix = "pollux:";

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_COMMENT_H

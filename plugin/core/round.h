// SPDX-License-Identifier: GPL-2.0-or-later
// One scheduling round of sched/pollux, without Slurm: from a copy of the
// cluster's state (taken under slurmctld's read locks), the jobs' models and
// the Pollux policy to what must change in Slurm (applied under its write
// locks). Pure: the same inputs give the same decisions.
//
// Per elastic job (phases in job_comment.h):
//   held      pending without GPUs; released at a size once the policy gives it GPUs
//   start     pending at a decided size; Slurm's own loop starts it there
//   run       running; a different decision signals it to checkpoint (-> ckpt)
//   ckpt      waits for the agent's acknowledgement in the hint (checkpoint
//             time >= the signal) or the checkpoint timeout, then requeue at
//             the decided size (-> start, or held when it gets no GPUs)
// Rigid jobs are never touched: their GPUs are taken out of what the policy
// distributes, and so are GPUs for the rigid GPU jobs waiting at the head of
// the queue, so that elastic jobs make room for them.
#ifndef POLLUX_SCHED_ROUND_H
#define POLLUX_SCHED_ROUND_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "elastic.h"
#include "job_comment.h"
#include "job_model.h"
#include "params.h"
#include "pollux/policy.h"

namespace pollux::sched {

struct NodeSnapshot {
  std::string name;
  int gpus = 0;          ///< GPUs the node has
  int rigid_gpus = 0;    ///< GPUs held by rigid jobs (running, suspended, completing)
  bool usable = true;    ///< new work may start here (up, not drained)
};

/// An elastic job: one job_submit/pollux held at submission, or one that
/// carries sched/pollux's state in its SystemComment.
struct ElasticJobSnapshot {
  std::uint32_t job_id = 0;
  std::uint32_t uid = 0;
  double submit_time = 0;       ///< the first submission (kept in the state: Slurm resets its own on requeue)
  double start_time = 0;        ///< of the current run, when running
  int restarts = 0;             ///< Slurm's restart count
  bool running = false;         ///< else pending
  bool held_by_other = false;   ///< a user's or administrator's hold: not scheduled, not touched
  bool held_by_pollux = false;  ///< pending and held by sched/pollux or job_submit/pollux
  ElasticRange range;
  std::optional<JobState> state;  ///< nullopt: not yet seen by a round
  Placement current;              ///< node shares of the running allocation
  Placement decided;              ///< state->alloc on this snapshot's nodes (empty if not resolvable)
  // Read by the enactment only:
  std::string system_comment;     ///< as it was
  double begin_time = 0;          ///< the job's begin time (pending)
  bool completing = false;        ///< pending after a requeue, still cleaning up its last run
  /// Pending after a requeue and done completing, but Slurm has not finished
  /// the requeue (batch_requeue_fini): it still holds its last run's records.
  bool requeue_unfinished = false;
};

/// A pending rigid job asking for GPUs, in Slurm's priority order.
struct RigidRequest {
  int nodes = 1;          ///< minimum node count
  int gpus_per_node = 0;  ///< --gpus-per-node (0 when given per job)
  int gpus = 0;           ///< total GPUs (--gpus), when gpus_per_node is 0
};

struct Snapshot {
  double now = 0;
  std::vector<NodeSnapshot> nodes;
  std::vector<ElasticJobSnapshot> jobs;
  std::vector<RigidRequest> rigid_queue;
};

/// What the round learnt about a job outside the locks.
struct JobInput {
  std::optional<JobModel> model;
  /// Time of the agent's checkpoint acknowledgement (ready_for_requeue), if any.
  std::optional<double> checkpoint_ack;
  /// The most GPUs the job has been profiled on: it may get at most twice
  /// as many (at least 1) this round, as in Pollux.
  int max_profiled_replicas = 0;
};

enum class Action {
  kNone,     ///< nothing in Slurm changes (the comment may)
  kHold,     ///< pending: hold it, no GPUs
  kRelease,  ///< pending: set its size to `alloc` (nodes, GPUs per node, tasks) and release it
  kSignal,   ///< running: SIGUSR1 to its steps, to checkpoint for a resize
  kRequeue,  ///< running: requeue it, then as kRelease (or kHold when `alloc` is empty), begin now + 2 s
};

const char* action_name(Action action) noexcept;

struct JobDecision {
  std::size_t job = 0;  ///< index in Snapshot::jobs
  Action action = Action::kNone;
  JobState state;       ///< the new state (written to the SystemComment)
  JobView view;
  std::string comment;  ///< format_comment(view, state)
};

struct RoundResult {
  std::vector<JobDecision> decisions;  ///< one per elastic job not held by others
  bool policy_ran = false;
  PolicyReport report;
  std::string error;  ///< why the policy's answer was not used (decisions then keep every size)
  int reserved_gpus = 0;  ///< GPUs kept free for rigid jobs at the head of the queue
};

/// `inputs[i]` belongs to `snapshot.jobs[i]`. `policy` may be null (no
/// policy available): then nothing is resized and held jobs stay held.
RoundResult plan_round(const Snapshot& snapshot, const std::vector<JobInput>& inputs, const Params& params,
                       Policy* policy);

/// The comma-separated node names of a placement.
std::string node_list(const Placement& placement, const std::vector<NodeSnapshot>& nodes);

/// A placement -> Alloc (nodes, GPUs per node, node names); the placement
/// must be uniform (every share the same).
Alloc to_alloc(const Placement& placement, const std::vector<NodeSnapshot>& nodes);

/// An Alloc's node names -> a placement on `nodes`; empty when a name is unknown.
Placement to_placement(const Alloc& alloc, const std::vector<NodeSnapshot>& nodes);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_ROUND_H

// SPDX-License-Identifier: GPL-2.0-or-later
// One scheduling round of sched/pollux, without Slurm: from a copy of the
// cluster's state (taken under slurmctld's read locks), the jobs' models and
// the Pollux policy to what must change in Slurm (applied under its write
// locks). Pure: the same inputs give the same decisions.
//
// Per elastic job (phases in job_comment.h):
//   held      pending without GPUs; released at a size once the policy gives it GPUs
//   start     pending at a decided size; Slurm's own loop starts it there
//   run       running; a different decision signals it to checkpoint (-> ckpt),
//             once its agent listens (can_resize: an *elastic* job); a
//             *moldable* one keeps the size it started at
//   ckpt      waits for the agent's acknowledgement in the hint (checkpoint
//             time >= the signal) or the checkpoint timeout, then requeue at
//             the decided size (-> start, or held when it gets no GPUs)
//   suspended suspended by an operator: its GPUs (Slurm keeps them) and the
//             job are left alone; resumed, it runs again at its size
// A running job the policy keeps at its size says why it did not grow
// (cap= in its SystemComment's view, not_grown()); why= stays its last
// decision.
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
#include "gpu_types.h"
#include "job_comment.h"
#include "job_model.h"
#include "params.h"
#include "pollux/policy.h"

namespace pollux::sched {

/// A node's power under Slurm's power saving (SuspendProgram/ResumeProgram).
enum class Power {
  kOn,       ///< up (or never powered down)
  kOff,      ///< powered down (or powering down): work placed here waits for a resume and a boot
  kBooting,  ///< resumed, not yet registered: work placed here waits for the rest of the boot
};

struct NodeSnapshot {
  std::string name;
  int gpus = 0;          ///< GPUs the node has
  int rigid_gpus = 0;    ///< GPUs held by rigid jobs (running, suspended, completing)
  bool usable = true;    ///< new work may start here (up, not drained)
  int type = 0;          ///< its GPUs' type: an index into Snapshot::gpu_types (0 when it has none)
  /// slurmctld has not heard from it since it started (Slurm's UNKNOWN
  /// state, for the seconds until its first registration after a
  /// restart): not usable for new work, but not failed either. What
  /// elastic jobs run or were promised there stands until it registers.
  bool awaiting_registration = false;
  Power power = Power::kOn;
  /// Slurm's power saving never suspends it (SuspendExcNodes, taken whole
  /// with 24.11's ":count"; SuspendExcParts): goodput auto-scaling keeps it
  /// on and usable, as an explicit power-down would override the exclusion.
  bool power_save_excluded = false;
  double boot_requested = 0;  ///< when slurmctld last resumed it (0: not booting)
  double slurmd_started = 0;  ///< when its slurmd started (its registration follows)
  double last_response = 0;   ///< slurmctld last heard from it
  /// Seconds work placed here now would wait for the node to boot
  /// (boot_times.h: what its boots took, less the time a booting node has
  /// booted already); 0 for a node that is on, or whose boots are unknown.
  double boot_wait = 0;
};

/// An elastic job: one job_submit/pollux held at submission, or one that
/// carries sched/pollux's state in its SystemComment.
struct ElasticJobSnapshot {
  std::uint32_t job_id = 0;
  std::uint32_t uid = 0;
  std::string partition;        ///< Slurm's partition list, for statistics (round_stats.h)
  double submit_time = 0;       ///< the first submission (kept in the state: Slurm resets its own on requeue)
  double start_time = 0;        ///< of the current run, when running
  int restarts = 0;             ///< Slurm's restart count
  bool running = false;         ///< else pending (or suspended)
  /// Suspended by an operator (scontrol suspend): neither running nor
  /// pending. Slurm keeps its GPUs (`current`), so the round leaves them
  /// and the job alone (state=suspended) until it is resumed.
  bool suspended = false;
  /// A user's or administrator's hold: not scheduled, not touched. Pending:
  /// no GPUs. Running (held while it runs): kept at its size, never requeued.
  bool held_by_other = false;
  bool held_by_pollux = false;  ///< pending and held by sched/pollux or job_submit/pollux
  ElasticRange range;
  std::optional<JobState> state;  ///< nullopt: not yet seen by a round
  Placement current;              ///< node shares of the running allocation
  Placement decided;              ///< state->alloc on this snapshot's nodes (empty if not resolvable)
  // Read by the enactment only:
  std::string system_comment;     ///< as it was
  double begin_time = 0;          ///< the job's begin time (pending)
  bool completing = false;        ///< pending after a requeue, still cleaning up its last run
  /// Pending: why Slurm would not start the job now at any size, from
  /// Slurm's own tests (blocker_*: dependency, reservation, partition), or
  /// "node-failed" (requeued, still completing on a node not responding);
  /// empty when nothing but its size stops it.
  Why blocker;
  std::string hold_text;          ///< pending and held: the reason text squeue shows
  /// Where and how large Slurm lets the job run, from Slurm's own tests
  /// before the policy chooses (job_runnable.h: job_bounds): allowed[n] for
  /// this snapshot's node n (empty: every node; its partitions, --exclude,
  /// --constraint, reservations), the fewest and most nodes and the most
  /// GPUs per node (0: no bound beyond the job's range; partition MinNodes,
  /// MaxNodes, MaxTime, MaxCPUsPerNode...). The policy keeps to them
  /// (allowed_range()).
  std::vector<bool> allowed;
  int max_nodes_limit = 0;
  int min_nodes_limit = 0;
  /// The most GPUs (all nodes together) its QOS and association limits
  /// allow (0: no bound below its range; job_acct_limits.h).
  int max_gpus_limit = 0;
  int max_gpus_per_node_limit = 0;
  /// Slurm allows the job no size at all: its reason (e.g.
  /// "PartitionTimeLimit", "QOSMaxNodePerJobLimit"); the job is left out of the round ("limits").
  std::string no_size;
  /// Sizes Slurm refused after sched/pollux set them (enact.cc), since the
  /// job's partitions, limits or range last changed: never proposed again.
  std::vector<Size> refused;
  /// What the job's bounds depend on besides its size (job_runnable.h:
  /// limits_key): refused sizes are forgotten when it changes.
  std::string limits_key;
  /// Slurm's main loop found the size sched/pollux set impossible
  /// (Reason=BadConstraints): that size, to add to `refused`.
  std::optional<Size> refused_now;
  long long time_limit = 0;       ///< Slurm's time limit of this run, minutes (0: none)
  double end_time = 0;            ///< running: Slurm's EndTime of the job
  /// Pending after a requeue and done completing, but Slurm has not finished
  /// the requeue (batch_requeue_fini): it still holds its last run's records.
  bool requeue_unfinished = false;
};

/// A pending rigid job asking for GPUs, in Slurm's priority order.
struct RigidRequest {
  int nodes = 1;          ///< minimum node count
  int gpus_per_node = 0;  ///< --gpus-per-node (0 when given per job)
  int gpus = 0;           ///< total GPUs (--gpus), when gpus_per_node is 0
  std::string gpu_type;   ///< the GRES type it asks for ("": any), e.g. --gpus-per-node=h100:2
};

/// An elastic job that ended since a round last saw it, and the
/// SystemComment that says so (state=end, alloc=0, why=how it ended).
struct EndedJob {
  std::uint32_t job_id = 0;
  std::string comment;
  /// GPUs its run held when it ended (its last state ran, checkpointed or
  /// was suspended); 0 for a job that ended waiting.
  int gpus = 0;
};

struct Snapshot {
  double now = 0;
  /// When this slurmctld's sched/pollux started its rounds (0: unknown).
  /// A promise decided before then is carried out (kRestartPromiseHold).
  double loaded = 0;
  /// The GRES type names of the nodes' GPUs, sorted (gpu_types.h; "" for
  /// untyped GPUs). Empty or [""]: an untyped cluster. With two or more,
  /// the policy places each job on nodes of one type and sees its speedup
  /// on each (TypedJobModel); with one, exactly what it sees untyped.
  std::vector<std::string> gpu_types;
  std::vector<EndedJob> ended;
  std::vector<NodeSnapshot> nodes;
  std::vector<ElasticJobSnapshot> jobs;
  std::vector<RigidRequest> rigid_queue;
  /// Elastic jobs' SystemComments read with a word this version does not
  /// know ("JobId=N: ..."), for the log.
  std::vector<std::string> comment_problems;
  /// The spool is full (spool_space.h): a running job whose hint is
  /// missing says so (cap=spool-full). Set outside the locks.
  bool spool_full = false;
};

/// What the round learnt about a job outside the locks: its hint's
/// measures (AgentMeasures: the most GPUs it has been profiled on - it may
/// get at most twice as many, at least 1, as in Pollux - and what a restart
/// costs it, from any of its runs: a waiting job's hint stays; 0: not
/// reported, pollux_restart_penalty stands in), and the rest below.
struct JobInput : AgentMeasures {
  std::optional<JobModel> model;
  /// Time of the agent's checkpoint acknowledgement (ready_for_requeue), if any.
  std::optional<double> checkpoint_ack;
  /// The signal the job's agent takes resize requests on (0: none
  /// announced), and the run whose hint announced it.
  int resize_signal = 0;
  int hint_restarts = -1;
  /// The job's agent checkpoints the moment it is signalled (pollux-sim's
  /// simulated agents; never set from a hint): a resize the round decides
  /// requeues the job at its new size in that round (kRequeue, no kSignal
  /// and no checkpoint phase), as an acknowledgement in the same instant
  /// would. sched/pollux waits for the real agent's acknowledgement.
  bool immediate_checkpoint = false;
  /// GPU-seconds the job has been served over its whole life, where the
  /// caller knows it (pollux-sim); nullopt: what slurmctld shows, its
  /// current run's (the policy orders its jobs by it).
  std::optional<double> attained_service;
};

/// Where a round may differ from sched/pollux's own rules, for a caller
/// that is not Slurm: pollux-sim reproducing the paper's runs, whose
/// placements Pollux's artifact did not restrict. The defaults are
/// sched/pollux's; the plugin never changes them. Rules, not parameters:
/// no row of the administrator's table (params.h) sets them.
struct RoundRules {
  /// Slurm grants each node of a job the same GPU count (--gpus-per-node):
  /// every placement is uniform, a job's speedup counts uniform sizes only
  /// (range_speedup) and validation refuses any other. false: any
  /// placement of the job's node range with at most its GPUs per node on
  /// each node (JobDecision::placement carries it), its speedup the
  /// model's at every size - the policy's own options say how it places.
  bool uniform_placements = true;
};

/// Whether the job's agent announced a resize signal the administrator
/// allows (pollux_resize_signals): an *elastic* job; else *moldable*.
bool elastic_kind(const JobInput& in, const Params& params);

/// Whether the job's agent wrote a hint (any run's): a job without one has
/// no checkpoint sched/pollux knows of, and a requeue starts its batch
/// script again from the beginning.
bool has_agent(const JobInput& in);

/// What a restart of the job costs it, in seconds, as the policy weighs it
/// (JobInfo::restart_delay, and the time-limit rule of jobs not resized):
/// its D (job_restart_delay: its measured restart time, at least
/// pollux_restart_penalty) plus, under Slurm's power saving, the longest
/// boot it may wait for: the largest boot_wait of the usable nodes it may
/// run on that are powered down or booting (0 when all are on). Coarse by
/// design: the policy weighs one cost per job, not one per placement.
double restart_cost(const Snapshot& snap, const ElasticJobSnapshot& job, const JobInput& in, const Params& params);

/// Whether a running job may be signalled for a resize now: elastic, and
/// the announcement is its current run's (a run that has not announced
/// yet cannot checkpoint: it is starting, or its program has no agent).
bool can_resize(const ElasticJobSnapshot& job, const JobInput& in, const Params& params);

enum class Action {
  kNone,     ///< nothing in Slurm changes (the comment may)
  kHold,     ///< pending: hold it, no GPUs
  kRelease,  ///< pending: set its size to `alloc` (nodes, GPUs per node, tasks) and release it
  kSignal,   ///< running: its agent's signal (JobDecision::signal) to its steps, to checkpoint for a resize
  kRequeue,  ///< running: requeue it, then as kRelease (or kHold when `alloc` is empty), parked until the requeue finished
};

const char* action_name(Action action) noexcept;

/// sched/pollux parks a job it requeues this far ahead (its begin time), so
/// that Slurm never starts it before a round has seen the requeue finish;
/// that round then sets the real begin time (enact.cc: early_begin).
inline constexpr double kRequeueParking = 3600.0;
/// A job sched/pollux requeues may start again this long after the
/// requeue: sooner, its new launch credential could carry the revocation's
/// time stamp.
inline constexpr double kRequeueGap = 2.0;
/// A begin time between kRequeueParking - kParkedFor and kRequeueParking
/// ahead is sched/pollux's parking (parked_by_pollux); a job requeued by
/// anyone else keeps Slurm's own wait (the credential lifetime + 1 s).
inline constexpr double kParkedFor = 1800.0;

/// A pending job promised GPUs (phase start) before slurmctld restarted
/// keeps its promise, unasked, for this long after the restarted plugin
/// loaded (and while its nodes await registration): time for the nodes
/// to register and for Slurm to finish its requeue and start it there.
/// The restarted plugin carries out what was decided with the cluster's
/// whole state rather than decide afresh on a partial one (issue 34).
inline constexpr double kRestartPromiseHold = 60.0;

/// Whether the pending job's begin time is sched/pollux's parking.
bool parked_by_pollux(const ElasticJobSnapshot& job, double now);

/// When a job that sched/pollux requeues (`action`) or has requeued and
/// parked, promised GPUs (`state`: phase start), starts as far as
/// sched/pollux can tell: kRequeueGap after the requeue, and not before
/// `now` + kRequeueGap while Slurm finishes the requeue (the parking, an
/// hour ahead, is no estimate). nullopt for any other job. What squeue
/// --start (the job's StartTime) and the SystemComment (start=) show.
std::optional<double> requeue_start(const ElasticJobSnapshot& job, const JobState& state, Action action, double now);

/// Begin times up to this long after a requeue's phase change were set by
/// the requeue (sched/pollux's parking, or Slurm's credential window), not by a user.
inline constexpr double kRequeueWindow = kRequeueParking + 60.0;

/// Why a pending elastic job cannot start now at any size, as the one-word
/// `why` of its SystemComment: "held" (a user's or administrator's hold),
/// the snapshot's blocker ("dependency", "dependency-never", "reservation",
/// "partition", "refused": Slurm found the size it was given impossible,
/// "node-failed": requeued and still completing on a node not responding),
/// "limits" (Slurm allows it no size: allowed_range()), or "begin" (a
/// begin time in the future that no requeue set). Empty when it can start. Such a job is left out of the round: it
/// gets no GPUs, and those it was promised are free again.
Why cannot_start(const ElasticJobSnapshot& job, double now);

/// The sizes the policy may give the job: its range within Slurm's bounds
/// (min/max nodes, max GPUs per node), less every size at least as large
/// as one Slurm refused (in both nodes and GPUs per node: Slurm's limits
/// grow with the size), kept a range by dropping whichever of the two
/// dimensions loses fewer sizes. nullopt when no size is left (or no_size).
std::optional<ElasticRange> allowed_range(const ElasticJobSnapshot& job);

/// A pending job whose last run ended without sched/pollux's requeue: Slurm
/// requeued it (its node failed, or was set DOWN: Slurm kills and requeues
/// the jobs on it), or an operator or the job itself did (`scontrol
/// requeue`). No checkpoint was taken for it and none is waited for: it is
/// placed afresh (why=requeued) and restarts from its last checkpoint (from
/// the beginning without an agent: has_agent), promptly (the arrivals round
/// after the requeue places it when its last nodes failed), after Slurm's
/// own wait (cred_expire + 1 s).
bool requeued_by_others(const ElasticJobSnapshot& job);

/// Why a running job that the policy kept at its size (in a round whose
/// answer was used) did not grow, as the `cap` of its SystemComment's view
/// (JobView::cap; later rounds that do not ask the policy keep it while
/// the job runs on at that size):
/// "at-max" (the largest size its range, Slurm's limits and its model's
/// batch size allow), "profiled" (`max_replicas`, the policy's cap for it,
/// is twice the GPUs its hints profiled: Pollux's rule), "no-free-gpus"
/// (no larger size it may take fits in `free`, the GPUs of each node the
/// round leaves unused, with its own), else "restart-cost" (a larger size
/// fits: the policy found its gain not worth a restart, or gave the GPUs to
/// another job).
Why not_grown(const Snapshot& snapshot, const ElasticJobSnapshot& job, const JobInput& in, int max_replicas,
              const std::vector<int>& free);

/// Seconds left of a running job's whole-life time limit; +inf without one.
double time_left(const ElasticJobSnapshot& job, const JobState& state, double now);

/// The end Slurm's backfill should plan with for a running elastic job
/// without a time limit (Slurm would plan it a year ahead, and let lower-
/// priority rigid jobs jump the queue): when sched/pollux would give its
/// GPUs to the rigid job at the head of the queue at the latest, the next
/// round plus a checkpoint plus a minute. Slurm does not enforce EndTime
/// without a time limit; the plugin moves it on each round.
double expected_end(double now, const Params& params);

struct JobDecision {
  std::size_t job = 0;  ///< index in Snapshot::jobs
  Action action = Action::kNone;
  JobState state;       ///< the new state (written to the SystemComment)
  JobView view;
  std::string comment;  ///< format_comment(view, state)
  std::string hold_reason;  ///< kHold: the reason text (job_state.h: hold_reason_for(state.why))
  /// Running without a time limit: the EndTime to give the job (0: leave
  /// it), see expected_end().
  double expected_end = 0;
  /// A line for the log about this decision, if any (a job Slurm requeued,
  /// a resize requeued at the checkpoint time-out).
  std::string note;
  int signal = 0;  ///< kSignal: the signal its agent announced
  /// kRequeue of a resize: at pollux_checkpoint_timeout, without the
  /// agent's acknowledgement (else on it).
  bool checkpoint_timed_out = false;
  /// The placement the round decided for the job (`state.alloc` as node
  /// shares; under RoundRules::uniform_placements = false, the only exact
  /// form of a non-uniform one).
  Placement placement;
};

/// Goodput auto-scaling's decision in a periodic round (autoscale_round.h).
struct AutoscalePlan {
  bool active = false;     ///< pollux_autoscale=goodput, and the round had a policy (periodic or arrivals)
  /// An arrivals round's plan: it limits where new jobs go, and powers
  /// nothing up or down (the periodic round sizes the cluster).
  bool places_only = false;
  int target = 0;          ///< the nodes worth running (libgoodput's autoscale_target: the band, the running jobs' floor)
  int paid = 0;            ///< the nodes on or booting that may take work from the policy (not wholly held by others)
  int gpus_per_node = 0;   ///< as desired_nodes saw it: the most GPUs of a node that may take work
  double utility = 0;      ///< the jobs' utility where they are, over the GPUs of the nodes paid
  std::string why;         ///< utility, band and target, for the log
  /// Per snapshot node: whether the policy may place jobs there this round
  /// (all true when not active).
  std::vector<bool> usable;
  /// Snapshot nodes to power down: on, idle, and beyond the target.
  std::vector<std::size_t> power_down;
  /// Snapshot nodes to resume ahead of need: powered down, within the
  /// target, and no job placed there this round (Slurm resumes those).
  std::vector<std::size_t> power_up;
};

struct RoundResult {
  std::vector<JobDecision> decisions;  ///< one per elastic job not held by others
  bool policy_ran = false;
  PolicyReport report;
  std::string error;  ///< why the policy's answer was not used (decisions then keep every size)
  int reserved_gpus = 0;  ///< GPUs kept free for rigid jobs at the head of the queue
  AutoscalePlan autoscale;  ///< pollux_autoscale=goodput: the nodes worth running, those to power down
  /// A periodic round whose policy answer was used: the sized jobs' utility
  /// at the placements chosen (libgoodput's cluster_utility: their summed
  /// speedups) over the GPUs paid for once the round is carried out (nodes
  /// on or booting and not powered down, resumed, or given a job) that the
  /// policy may use; what goodput auto-scaling keeps in its band. -1
  /// otherwise.
  double utility = -1;
};

/// `inputs[i]` belongs to `snapshot.jobs[i]`. `policy` may be null (no
/// policy available): then nothing is resized and held jobs stay held.
/// `arrivals_only` (the prompt round after a submission, a release or a
/// job's end): the policy sizes only the jobs that hold and were promised
/// no GPUs, in the GPUs the others leave; no running job is resized, so an
/// arrivals round never makes a job restart. (A job's end that frees GPUs
/// brings a whole round forward instead: freed_gpus.h.)
/// A pipeline of named stages (round.cc): capacity (the GPUs elastic jobs
/// may share), select_jobs (who the policy schedules), promises (what each
/// keeps without the policy), ask_policy (the policy, and validation of its
/// answer), decide / decide_outside (the state transitions, job_transitions.h)
/// and finish (the kind and EndTime every decision carries). A job that
/// runs or was promised GPUs on a node awaiting registration (a slurmctld
/// restart) is not asked: it keeps its size, its checkpoint's decided move
/// or its promise, and nothing new is placed on that node; nor is a job
/// promised GPUs before the restart, for kRestartPromiseHold after it. On a cluster
/// of several GPU types, the stage type_models gives each job its model per
/// type, from `ratios` (one slot per snapshot.gpu_types; when null or of
/// another size: pollux_gpu_type_speeds alone), and validation refuses a
/// placement across types. With pollux_autoscale=goodput, a periodic round
/// (a policy, not arrivals_only) sizes the cluster first (autoscale_round.h:
/// the policy may use the nodes worth running), names the idle nodes beyond
/// them to power down and those within them still powered down to resume;
/// an arrivals round places new jobs only on the nodes worth running (its
/// plan counts every job, the new ones too) and powers nothing.
/// `rules`: sched/pollux's by default (RoundRules).
RoundResult plan_round(const Snapshot& snapshot, const std::vector<JobInput>& inputs, const Params& params,
                       Policy* policy, bool arrivals_only = false, const TypeRatios* ratios = nullptr,
                       const RoundRules& rules = {});

/// On a cluster of several GPU types: the learner's ratios for them (seeded
/// from pollux_gpu_type_speeds), after it is told the fits of every job
/// whose hint names two or more types; nullptr otherwise. For plan_round.
const TypeRatios* learn_type_ratios(const Snapshot& snapshot, const std::vector<JobInput>& inputs,
                                    const Params& params, TypeSpeedLearner& learner);

/// Whether the cluster's GPUs have GRES types (the SystemComment then says
/// a job's type and its goodput on each).
bool typed_cluster(const Snapshot& snapshot);

/// The GPU type of a placement's nodes (its first node's: a decision never
/// spans types); -1 when empty.
int placement_type(const Placement& placement, const std::vector<NodeSnapshot>& nodes);

/// The comma-separated node names of a placement.
std::string node_list(const Placement& placement, const std::vector<NodeSnapshot>& nodes);

/// A placement -> Alloc (nodes, GPUs per node, node names); the placement
/// must be uniform (every share the same).
Alloc to_alloc(const Placement& placement, const std::vector<NodeSnapshot>& nodes);

/// An Alloc's node names -> a placement on `nodes`; empty when a name is unknown.
Placement to_placement(const Alloc& alloc, const std::vector<NodeSnapshot>& nodes);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_ROUND_H

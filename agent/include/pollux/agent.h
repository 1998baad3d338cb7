// libpollux-agent: the job-side half of Pollux for Slurm.
//
// One Agent per training process (MPI rank). It
//  - times every micro-step (forward + backward) and every optimizer step
//    including the gradient all-reduce, per (nodes, replicas, atomic batch);
//  - measures the squared norm of each rank's gradient before the
//    all-reduce and of the averaged gradient after it, and estimates the
//    gradient noise (libgoodput's GradNoiseEstimator);
//  - fits the throughput model and picks (atomic batch, accumulation steps)
//    for the allocation it runs on (libgoodput), exposing the AdaScale
//    learning-rate gain and the scale-invariant progress;
//  - writes the job's hint file into the spool (rank 0), which is what the
//    scheduler plugin sees;
//  - on the plugin's resize signal, checkpoints at the next step boundary
//    through the application's callback, acknowledges in the hint and
//    waits to be requeued; after requeue restore() brings the model and the
//    agent's own state back.
//
// The training loop (see doc/agent.md for a complete program):
//
//   agent->on_checkpoint(save); agent->on_restore(load);
//   agent->restore();
//   while (agent->progress() < target) {
//     for (int k = 0; k <= agent->accum_steps(); ++k) {
//       agent->micro_step_begin();
//       /* forward + backward on agent->atomic_batch() examples into grad */
//       agent->micro_step_end(grad);
//     }
//     agent->synchronize(grad);          // grad = mean over all replicas
//     /* optimizer step with lr0 * agent->lr_gain() */
//     if (agent->step_end() == pollux::StepAction::kRequeueExit)
//       return agent->options().requeue_exit_code;
//   }
//
// The framework-neutral mode (make_external_agent()): when a framework
// all-reduces the gradients itself (PyTorch DDP, Horovod, ...), the
// application reports per optimizer step what it measured instead of
// handing over a buffer:
//
//   agent->micro_step_begin();
//   /* forward + backward; the framework's all-reduce runs on the last one */
//   agent->micro_step_end();              // compute done (e.g. last bucket ready)
//   agent->synchronized(norms);           // all-reduce done; the norms summed over buckets
//   /* optimizer step */  agent->step_end();
//
// Everything else (the step packet, the estimator, the adaptation, hints,
// checkpoints, resizes) is the same agent.
//
// Thread safety: an Agent is used by one thread at a time (the training
// loop; a framework's backward thread may call micro_step_end() while the
// loop waits for it). All
// methods marked "collective" must be called by every rank in the same
// order. Errors: methods throw std::runtime_error / std::invalid_argument
// with a message naming what failed; collective failures are reported on
// every rank.
#ifndef POLLUX_AGENT_H
#define POLLUX_AGENT_H

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pollux/checkpoint_store.h"  // SupersededError
#include "pollux/efficiency.h"
#include "pollux/goodput.h"
#include "pollux/throughput.h"

namespace pollux {

/// Element type of a gradient buffer.
enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16 };

/// Bytes of one element of `t`.
std::size_t dtype_size(DType t) noexcept;

/// A flat gradient buffer, in host memory for CPU agents and in device
/// memory for CUDA agents. All parameters' gradients in one buffer.
struct GradientBuffer {
  void* data = nullptr;
  std::size_t count = 0;  ///< elements
  DType dtype = DType::kFloat32;
};

/// The one-replica fallback of the gradient-noise estimate pairs steps:
/// the first of a pair keeps its averaged gradient, the second measures
/// its inner product with it. Non-overlapping pairs cost one copy and one
/// dot product per two steps, and give independent samples.
enum class TwoStep { kOff, kKeep, kCompare };

/// Framework-neutral mode: what one rank measured in one optimizer step,
/// each squared norm summed over the framework's buckets.
struct GradientNorms {
  /// Sum of |g_i|^2 over this rank's local gradients g_i before the
  /// all-reduce, each the mean over its examples.
  double local_sqr = 0;
  /// How many local gradients local_sqr sums: 1 (the rank's whole step,
  /// atomic_batch() * (accum_steps() + 1) examples, as with DDP's no_sync
  /// accumulation) or accum_steps() + 1 (one per micro-step).
  int local_grads = 1;
  /// |mean gradient over all replicas|^2 after the all-reduce.
  double sync_sqr = 0;
  /// Only when two_step_phase() was kCompare: |kept gradient|^2 and
  /// <kept, current> (the kept one: the averaged gradient of the kKeep step).
  bool has_prev = false;
  double prev_sqr = 0;
  double dot_prev = 0;
};

/// Framework-neutral mode, measured on the application's device and read a
/// step late (synchronized_late()): one rank's record of one step.
struct StepMeasurement {
  GradientNorms norms;
  /// Seconds, summed over the step's micro-steps: each accumulation
  /// micro-step from its batch's delivery to the next one's, the last from
  /// its batch's delivery to the end of its computation (last gradient
  /// ready; with one replica, to the next step's first batch: nothing else
  /// is left to model).
  double grad_time_sum = 0;
  int micro_steps = 0;
  /// Seconds from the last micro-step's batch to the next step's first
  /// batch: computation, the all-reduce not hidden by it, the optimizer,
  /// the loader and the user's code.
  double step_time = 0;
};

/// What the agent does once a resize checkpoint is committed.
enum class RequeueMode {
  kWait,  ///< acknowledge in the hint and wait to be requeued by sched/pollux (default)
  kExit,  ///< step_end() returns kRequeueExit; exit with requeue_exit_code (RequeueExit)
};

struct AgentOptions {
  /// The job's batch-size limits: M0 (init_batch), M_max, m_min, m_max and
  /// whether gradient accumulation may be used.
  BatchLimits limits;
  double smoothing = 0.999;     ///< gradient-statistics decay per M0 step
  bool adapt = true;            ///< re-pick the batch size (false: stay at M0)

  std::string spool_dir;        ///< "" = resolve_spool_dir() (POLLUX_SPOOL_DIR, slurm.conf, default)
  bool write_hints = true;      ///< rank 0 writes <spool>/<job_id>.hint.yaml (needs a Slurm job id)
  double hint_interval = 5.0;   ///< seconds between rewrites when nothing changed
  double refit_interval = 5.0;  ///< seconds between re-fits while new samples arrive

  /// "" = $POLLUX_CHECKPOINT_DIR, else (in a Slurm job)
  /// $HOME/.cache/pollux/checkpoints/<cluster>-<key>/<job id> (<key>: a
  /// hash of slurm.conf's StateSaveLocation, so that clusters of one name
  /// do not share it; see checkpoint_root()), which a job's
  /// first run (restart count 0) takes over from an earlier job that had
  /// the same id (Slurm reuses ids); else ./pollux-ckpt/local.
  std::string checkpoint_dir;
  RequeueMode requeue_mode = RequeueMode::kWait;
  double requeue_wait = 300.0;  ///< seconds to wait for the requeue before resuming
  /// Seconds of training between automatic checkpoints (at a step boundary,
  /// all ranks at the same step; any checkpoint restarts the interval), so
  /// that a node failure loses at most this much; 0 = only on resize and
  /// when the application calls checkpoint().
  double checkpoint_interval = 1800.0;
  int requeue_exit_code = 75;   ///< EX_TEMPFAIL; list it in slurm.conf's RequeueExit
  int resize_signal = SIGUSR1;  ///< the signal sched/pollux sends (0: none handled)

  /// The GPU type this process reports in its hint (doc/agent.md, "GPU
  /// type"); "" = $POLLUX_GPU_TYPE, else the type of device_name.
  std::string gpu_type;
  /// The name of the GPU the process trains on, as its driver or framework
  /// gives it ("NVIDIA H100 80GB HBM3"): make_cuda_agent() sets its CUDA
  /// device's, a framework binding its own (pollux.torch:
  /// torch.cuda.get_device_name()); "" = none (a CPU run: no type).
  std::string device_name;

  int warmup_steps = 2;         ///< steps not profiled after a start or a config change
  int min_profile_steps = 5;    ///< profiled steps after which a new config counts as a profile change
  int verbose = 1;              ///< 0 quiet, 1 decisions (rank 0), 2 debug

  /// Applies POLLUX_* environment overrides (see doc/agent.md, "Environment").
  /// Throws std::invalid_argument naming the variable if a value is malformed.
  void apply_environment();
  /// Throws std::invalid_argument naming the first inconsistent option.
  void validate() const;
};

/// The GPU type a process with these options reports (doc/agent.md, "GPU
/// type"): normalize_gpu_type() (pollux/gpu_type.h) of options.gpu_type,
/// else of $POLLUX_GPU_TYPE, else of options.device_name; "" when none
/// names a type (a CPU run). Throws std::invalid_argument when a type
/// given has no letter or digit.
std::string reported_gpu_type(const AgentOptions& options);

/// What the job learns from Slurm's environment.
struct JobEnvironment {
  std::uint32_t job_id = 0;   ///< SLURM_JOB_ID; 0 outside Slurm (no hints then)
  int restart_count = 0;      ///< SLURM_RESTART_COUNT
  int num_nodes = 0;          ///< SLURM_JOB_NUM_NODES (0: unknown)
  int ntasks = 0;             ///< SLURM_NTASKS (0: unknown)
  int procid = -1;            ///< SLURM_PROCID (-1: unknown)
  std::string nodelist;       ///< SLURM_JOB_NODELIST
  std::string node_name;      ///< SLURMD_NODENAME, else the host name
  std::string submit_dir;     ///< SLURM_SUBMIT_DIR
  std::string cluster;        ///< SLURM_CLUSTER_NAME
  std::uint32_t uid = 0;      ///< getuid()

  /// Throws std::invalid_argument naming the variable if one is malformed.
  static JobEnvironment from_environment();
};

/// The checkpoint directory of a job with these options (see
/// AgentOptions::checkpoint_dir).
std::string checkpoint_root(const AgentOptions& options, const JobEnvironment& env);
/// Whether checkpoint_root() is the per-job default (no directory given)
/// in a Slurm job: a first run there starts afresh (see checkpoint_dir).
bool default_job_checkpoint_root(const AgentOptions& options, const JobEnvironment& env);
/// Whether a committed checkpoint waits in this process's checkpoint
/// directory (what Agent::restore() would resume from), before any agent
/// exists: frameworks answer "resumed?" from their start on. Throws
/// std::runtime_error if the directory's `latest` is corrupt.
bool checkpoint_waiting(const AgentOptions& options);

/// Where a checkpoint is written to or read from.
struct CheckpointContext {
  std::string dir;      ///< directory shared by all ranks; name files per rank if they differ
  int rank = 0;
  int replicas = 1;
  long long step = 0;   ///< optimizer steps the checkpoint holds
};

/// Application callbacks: write / read the model and optimizer state.
/// Throw on failure; the agent then never commits the checkpoint.
using CheckpointFn = std::function<void(const CheckpointContext&)>;
/// Called on every rank once a resize's checkpoint is committed, before the
/// agent acknowledges it and waits to be requeued (Slurm's requeue then
/// ends the process with SIGTERM, and a program's buffered output would be
/// lost) or, in RequeueMode::kExit, returns kRequeueExit: the place to
/// flush the program's own logs. Training may still resume (no requeue
/// within requeue_wait), so flush rather than close. A throw is logged and
/// the resize goes on.
using RequeueFn = std::function<void()>;

enum class StepAction {
  kContinue,
  kRequeueExit,  ///< RequeueMode::kExit: checkpoint committed, exit with requeue_exit_code
};

class Communicator;
class StepBackend;

class Agent {
 public:
  /// Builds an agent over a communicator (host collectives) and a step
  /// backend (where gradients live). Prefer the factories:
  /// make_local_agent(), make_mpi_agent() (pollux/agent_mpi.h),
  /// make_cuda_agent() (pollux/agent_cuda.h). Collective.
  Agent(std::unique_ptr<Communicator> comm, std::unique_ptr<StepBackend> backend,
        AgentOptions options, JobEnvironment env);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  void on_checkpoint(CheckpointFn fn);
  void on_restore(CheckpointFn fn);
  void on_requeue(RequeueFn fn);

  /// Restores the latest committed checkpoint if there is one (model through
  /// the restore callback, then the agent's state) and re-picks the batch
  /// size for this allocation. Returns false when there is none. Collective.
  /// It claims the checkpoint directory for this run (Slurm's restart
  /// count); SupersededError if a later run of the job owns it.
  bool restore();
  /// Takes a checkpoint now (at a step boundary). Collective. Throws
  /// std::runtime_error, on every rank and with rank 0's reason, when it
  /// failed (the previous checkpoint stays; training may go on; see
  /// CheckpointStore::commit() for the one case where the new one is
  /// already the latest), and SupersededError, on every rank, when a later
  /// run of the job owns the checkpoint directory (Slurm requeued the job
  /// while this run still trained): then stop training.
  void checkpoint();

  // --- The configuration to run the next optimizer step with -------------
  int atomic_batch() const noexcept;
  int accum_steps() const noexcept;
  /// replicas * atomic_batch * (accum_steps + 1).
  long long total_batch() const noexcept;
  /// Sets the configuration from the next step on, overriding the agent's
  /// choice until it makes another (use adapt = false to keep it). Call on
  /// every rank between step_end() and the next micro_step_begin(), at the
  /// same step. Throws std::invalid_argument outside the job's limits.
  void set_batch_config(int atomic_batch, int accum_steps);
  /// The largest micro-batch the agent configures: the job's m_max
  /// (options().limits.max_atomic), lowered by out_of_memory() and, from
  /// restore() on, by what an earlier run of the job learnt.
  int max_atomic() const noexcept;
  /// Micro-batch `micro_batch` ran out of memory on this rank (not
  /// collective: the rank that failed calls it, then stops; doc/agent.md,
  /// "Memory"). max_atomic() becomes the largest micro-batch that completed
  /// a step in this process if below `micro_batch`, else micro_batch - 1;
  /// rank 0's hint publishes it, and <checkpoint_dir()>/memory-limit keeps
  /// it (written atomically) for the job's later runs: restore() applies it
  /// when it resumes from a checkpoint or in the same Slurm job. Returns
  /// the new max_atomic(). Throws std::runtime_error when `micro_batch` is
  /// at most m_min (nothing smaller to try), or when the file cannot be
  /// written (the limit then holds in this process only).
  int out_of_memory(int micro_batch);
  /// Declares the job's parameters sharded across its replicas (FSDP,
  /// ZeRO-3-like: its collectives run inside every forward and backward,
  /// nothing is all-reduced after it): rank 0 fits the throughput model's
  /// sharded form (pollux/throughput.h) from its next re-fit on, and its
  /// hint says so (perf.sharded), so that the scheduler's speedup is that
  /// form's. Default: not sharded (DDP's all-reduce after the backward).
  /// Call it on every rank, before the first step (the ranks need not
  /// agree: only rank 0 fits). A change re-fits at the next step's end.
  void set_sharded(bool sharded);
  bool sharded() const noexcept;
  /// AdaScale gain for the next step: multiply the learning rate tuned for
  /// M0 by it. 1 until the gradient statistics are measured.
  double lr_gain() const noexcept;

  // --- Where training stands ---------------------------------------------
  long long step() const noexcept;          ///< optimizer steps taken
  long long samples_seen() const noexcept;  ///< examples consumed (sum of total batches)
  double progress() const noexcept;         ///< scale-invariant progress, in M0 steps (sum of gains)

  int rank() const noexcept;
  int replicas() const noexcept;
  int nodes() const noexcept;
  const JobEnvironment& job() const noexcept;
  const AgentOptions& options() const noexcept;
  /// Where checkpoints go, and the hint file ("" when hints are off).
  const std::string& checkpoint_dir() const noexcept;
  std::string hint_file() const;

  /// Measured statistics (nullopt before the first estimate).
  std::optional<GradStats> grad_stats() const;
  /// Last fitted throughput model (rank 0 only; nullopt elsewhere or before the first fit).
  std::optional<PerfParams> perf_params() const;
  /// Profiled configurations (identical on all ranks).
  std::vector<ProfileSample> profile() const;

  // --- The step protocol ---------------------------------------------------
  /// Starts timing a micro-step (forward + backward).
  void micro_step_begin();
  /// Ends a micro-step. `grad` holds the gradient of this micro-batch alone
  /// (mean over its atomic_batch() examples); the agent measures its norm
  /// and, if more micro-steps follow, accumulates it, so the application
  /// may overwrite `grad` in the next micro-step.
  void micro_step_end(const GradientBuffer& grad);
  /// After the last micro-step: adds the accumulated micro-gradients,
  /// all-reduces across replicas and divides, so that `grad` holds the
  /// mean gradient of the whole batch of total_batch() examples. Collective.
  void synchronize(GradientBuffer& grad);
  // --- The framework-neutral mode (make_external_agent()) -----------------
  /// Ends a micro-step's computation (forward + backward, not the
  /// framework's all-reduce). Throws std::logic_error on a buffer agent.
  void micro_step_end();
  /// After the last micro-step, once the framework's all-reduce is done:
  /// the step's squared norms (see GradientNorms). Collective. Throws
  /// std::logic_error on a buffer agent, std::invalid_argument on
  /// non-finite or negative norms or local_grads not 1 or accum_steps()+1.
  void synchronized(const GradientNorms& norms);
  /// In place of synchronized() (and of the agent's host clock), for an
  /// application that measures on its device without waiting for it:
  /// `previous` is the previous step's measurement (null: none, e.g. the
  /// first step), this step's comes with the next call. Non-finite or
  /// negative values make that record carry nothing (no statistics, no
  /// profile) rather than an error. `skipped`: this step's update was left
  /// out (an overflowed fp16 step): its batch counts in samples_seen(), not
  /// in progress(), and its record is not used. Collective.
  void synchronized_late(const StepMeasurement* previous, bool skipped);
  /// Whether the next step's averaged gradient is to be kept (kKeep) or
  /// compared with the kept one (kCompare, report has_prev) for the
  /// one-replica estimate; kOff with more replicas. Constant from
  /// step_end() to the next synchronized().
  TwoStep two_step_phase() const noexcept;
  /// True for an agent made by make_external_agent().
  bool external() const noexcept;

  /// Ends the optimizer step (call after applying the update). Advances
  /// step/progress, applies a new batch configuration if one was chosen, and
  /// runs the resize protocol when the scheduler asked for it. Collective.
  /// Throws SupersededError like checkpoint().
  StepAction step_end();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A single-process agent without MPI (one replica, CPU buffers).
std::unique_ptr<Agent> make_local_agent(AgentOptions options);

/// A framework-neutral agent (see GradientNorms): the framework does the
/// all-reduce, the application reports the squared norms and the step
/// boundaries. `comm` carries the agent's own small collectives (null: one
/// process). Collective.
std::unique_ptr<Agent> make_external_agent(std::unique_ptr<Communicator> comm, AgentOptions options);

/// The batch configuration the agent starts with on `replicas` replicas,
/// before it has a model: M0 split over the replicas (accumulating when a
/// share exceeds m_max), respecting m_min.
BatchConfig initial_config(const BatchLimits& limits, int replicas) noexcept;

}  // namespace pollux

#endif  // POLLUX_AGENT_H

// The agent: step protocol, statistics, adaptation, hints, checkpoints and
// the resize protocol (see pollux/agent.h and doc/agent.md).
//
// Per optimizer step every rank contributes one small vector to a SUM
// all-reduce that overlaps the gradient all-reduce (the "packet"). It
// carries the previous step's measurements (so that a GPU backend never
// has to wait for the current step's), the resize flag raised by the
// scheduler's signal, and rank 0's batch-size decision. All ranks thus
// see the same numbers and take the same decisions at the same step
// boundary, without any extra collective.
#include "pollux/agent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "adapter.h"
#include "agent_state.h"
#include "external_backend.h"
#include "log.h"
#include "pollux/agent_backend.h"
#include "pollux/atomic_file.h"
#include "pollux/checkpoint_store.h"
#include "pollux/grad_noise.h"
#include "pollux/hint_fields.h"
#include "pollux/resize_decision.h"
#include "pollux/spool_dir.h"
#include "profile_table.h"
#include "resize_signal.h"
#include "root_message.h"

namespace pollux {

using agent_detail::AdaptRequest;
using agent_detail::Adapter;
using agent_detail::AgentState;
using agent_detail::log;
using agent_detail::ProfileTable;
using agent_detail::RootMessage;
using agent_detail::share_from_root;

std::size_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
  }
  return 0;
}

BatchConfig initial_config(const BatchLimits& limits, int replicas) noexcept {
  BatchConfig c;
  if (replicas < 1 || !limits.valid()) return c;
  const double local = limits.init_batch / replicas;
  if (limits.accumulation) {
    c.accum_steps = std::max(0, static_cast<int>(std::ceil(local / limits.max_atomic - 1e-8)) - 1);
    c.atomic_batch = static_cast<int>(std::ceil(local / (c.accum_steps + 1) - 1e-8));
  } else {
    c.atomic_batch = static_cast<int>(std::ceil(local - 1e-8));
  }
  c.atomic_batch = std::clamp(c.atomic_batch, limits.min_atomic, limits.max_atomic);
  return c;
}

namespace {

using Clock = std::chrono::steady_clock;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Layout of the per-step packet (SUM all-reduce).
enum Packet {
  kResize,       // ranks that saw the resize signal
  kValid,        // ranks with a valid record of the previous step
  kLocalSqr,     // sum of |local micro-gradient|^2
  kMicroSteps,   // micro-steps in the step (R * (s + 1))
  kLocalGrads,   // local gradients kLocalSqr sums (R * (s + 1), or R in the framework-neutral mode)
  kGradTime,     // sum of micro-step seconds
  kStepTime,     // sum over ranks of the step's seconds
  kCheckpoint,   // rank 0: 1 if a periodic checkpoint is due
  kPropose,      // rank 0: 1 if a new configuration follows
  kAtomic,
  kAccum,
  kPacketSize
};

constexpr std::size_t kMaxStateBytes = 16u << 20;

// Seconds since this process started (its exec), or nullopt where /proc
// cannot say: /proc/self/stat's starttime (clock ticks since boot) against
// CLOCK_BOOTTIME, the same clock, rather than /proc/stat's btime, which is
// whole seconds and moves when the wall clock is stepped. For a Python
// program this covers the interpreter and its imports (torch, NCCL).
std::optional<double> process_age() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // The command name (field 2) may hold spaces and ')': the fields after
  // its last ')' start with field 3; starttime is field 22.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;
  if (!fields) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long ticks = std::strtoull(field.c_str(), &end, 10);
  const long hz = ::sysconf(_SC_CLK_TCK);
  timespec now{};
  if (errno != 0 || *end != '\0' || hz <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &now) != 0) return std::nullopt;
  const double age = static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9 - static_cast<double>(ticks) / hz;
  return age >= 0 ? std::optional<double>(age) : std::nullopt;
}

}  // namespace

struct Agent::Impl {
  // What a record of the previous step was measured under.
  struct RecordContext {
    int atomic = 0;
    int accum = 0;
    bool profiled = false;
    bool two_step = false;
    bool skipped = false;  // the update was left out: no progress, no statistics
  };

  std::unique_ptr<Communicator> comm;
  std::unique_ptr<StepBackend> backend;
  agent_detail::ExternalBackend* external = nullptr;  // the backend, in the framework-neutral mode
  AgentOptions opt;
  JobEnvironment env;
  int rank = 0, replicas = 1, nodes = 1;
  GradNoiseEstimator estimator;
  ProfileTable profile{kHintMaxSamples};  // of this run's GPU type
  std::string gpu_type;                    // reported_gpu_type(): the hint's gpu_type
  std::vector<HintTypePerf> type_perf;     // the job's fits on the other types it ran on
  std::vector<agent_detail::TypeProfile> type_profiles;  // and their profiles (checkpointed, not hinted)
  std::string spool_dir;  // "" = no hints
  CheckpointStore store;
  std::unique_ptr<Adapter> adapter;  // rank 0
  CheckpointFn save_fn, load_fn;
  RequeueFn requeue_fn;
  agent_detail::ResizeSignal resize_signal;

  // The configuration and where training stands.
  int atomic = 1, accum = 0;
  double gain = 1;
  long long step = 0, samples = 0;
  double progress = 0;
  int steps_since_config = 0;

  // Step protocol state.
  int micro_done = 0;
  bool in_micro = false, synced = false;
  RecordContext record_ctx, current_ctx;
  bool skip_current = false;  // synchronized_late(): this step's update is left out
  long seen_signals = 0, packet_signals = 0;
  long seen_checkpoint_requests = 0;  // rank 0: non-resize deliveries answered by a checkpoint
  bool ready = false;    // every rank's agent exists: the resize signal is announced
  bool closing = false;  // the last hint: the agent stops listening
  bool resize_requested = false;
  bool periodic_due = false;          // every rank: take a periodic checkpoint at this step's end
  Clock::time_point next_periodic{};  // rank 0: when the next one is due
  std::optional<std::pair<int, int>> pending_config;
  double packet[kPacketSize] = {};

  // Rank 0's adaptation schedule.
  Clock::time_point last_fit{}, last_hint{};
  bool new_data = false, profile_changed = false, config_changed = false;
  std::optional<HintCheckpoint> last_checkpoint;

  // What a restart costs the job (the hint's restart_seconds), known at
  // the end of this run's first step.
  Clock::time_point created = Clock::now();
  double restored_save_seconds = 0;  // the save time of the checkpoint this run restored from
  bool first_step_done = false;
  double restart_seconds = 0;        // rank 0: 0 until the first step ends
  bool restart_news = false;         // rank 0: the hint is written at once when it becomes known

  Impl(std::unique_ptr<Communicator> c, std::unique_ptr<StepBackend> b, AgentOptions o, JobEnvironment e)
      : comm(std::move(c)),
        backend(std::move(b)),
        opt(std::move(o)),
        env(std::move(e)),
        estimator((opt.validate(), opt.limits.init_batch), opt.smoothing),
        gpu_type(reported_gpu_type(opt)),
        store(checkpoint_root(opt, env), env.restart_count),
        resize_signal(opt.resize_signal, decision_path(opt, env), env.restart_count) {
    external = dynamic_cast<agent_detail::ExternalBackend*>(backend.get());
    rank = comm->rank();
    replicas = comm->size();
    nodes = comm->nodes();
    // A signal that came before this agent (during start-up) is acted on
    // at the first step boundary.
    seen_signals = agent_detail::ResizeSignal::handled();
    seen_checkpoint_requests = agent_detail::ResizeSignal::checkpoint_requests();
    schedule_periodic();
    if (opt.write_hints && env.job_id != 0) spool_dir = opt.spool_dir.empty() ? resolve_spool_dir() : opt.spool_dir;
    const BatchConfig init = initial_config(opt.limits, replicas);
    atomic = init.atomic_batch;
    accum = init.accum_steps;
    if (rank == 0) {
      adapter = std::make_unique<Adapter>(spool_dir, rank, opt.verbose);
      if (opt.verbose >= 1) {
        log(rank, "job %u (restart %d): %d replica(s) on %d node(s); M0=%g, M_max=%g, atomic in [%d, %d]%s; hints %s; checkpoints in %s",
            env.job_id, env.restart_count, replicas, nodes, opt.limits.init_batch, opt.limits.max_batch,
            opt.limits.min_atomic, opt.limits.max_atomic, opt.limits.accumulation ? ", accumulation" : "",
            spool_dir.empty() ? "off" : hint_path(spool_dir, env.job_id).c_str(), store.root().c_str());
        if (!gpu_type.empty()) log(rank, "GPU type %s", gpu_type.c_str());
      }
      if (env.ntasks > 0 && env.ntasks != replicas)
        log(rank, "SLURM_NTASKS=%d but the communicator has %d rank(s): the agent counts the communicator's",
            env.ntasks, replicas);
      if (env.job_id == 0 && opt.write_hints && opt.verbose >= 1)
        log(rank, "no SLURM_JOB_ID: not a Slurm job, no hint file is written");
    }
    if (rank == 0) publish(false, AdaptRequest::Propose::kNo);
  }

  ~Impl() {
    if (adapter) {
      // The last word: a hint with everything measured (never throws out),
      // no longer listening for resizes.
      try {
        closing = true;
        publish(new_data, AdaptRequest::Propose::kNo);
      } catch (...) {
      }
      adapter->flush();
    }
  }

  // Where sched/pollux writes its resize decisions for this job; "" outside
  // Slurm (every delivery of the signal is then a request).
  static std::string decision_path(const AgentOptions& o, const JobEnvironment& e) {
    if (e.job_id == 0) return {};
    try {
      return resize_decision_path(o.spool_dir.empty() ? resolve_spool_dir() : o.spool_dir, e.job_id);
    } catch (const std::exception&) {
      return resize_decision_path(kDefaultSpoolDir, e.job_id);
    }
  }

  long long total_batch() const { return static_cast<long long>(replicas) * atomic * (accum + 1); }

  void update_gain() {
    gain = estimator.has_estimate() ? adascale_gain(estimator.stats(), double(total_batch()), opt.limits.init_batch)
                                    : 1.0;
  }

  // --- Hints and adaptation (rank 0) ---------------------------------------
  Hint make_hint() const {
    Hint h;
    h.job_id = env.job_id;
    h.uid = env.uid;
    h.timestamp = unix_now();
    h.restart_count = env.restart_count;
    h.limits = opt.limits;
    if (estimator.has_estimate()) h.grad = estimator.stats();
    h.config = HintConfig{nodes, replicas, atomic, accum};
    h.gpu_type = gpu_type;
    h.type_perf = type_perf;
    h.progress = progress;
    h.step = step;
    h.profile = profile.samples();
    h.max_profiled_replicas = std::max(profile.max_replicas(), replicas);
    h.checkpoint = last_checkpoint;
    h.restart_seconds = restart_seconds;
    // Announced once every rank's agent (and handler) exists, until the end.
    if (resize_signal.listening() && ready && !closing) h.resize_signal = opt.resize_signal;
    return h;
  }

  void publish(bool refit, AdaptRequest::Propose propose) {
    AdaptRequest req;
    req.hint = make_hint();
    req.refit = refit;
    req.propose = opt.adapt ? propose : AdaptRequest::Propose::kNo;
    adapter->submit(std::move(req));
    last_hint = Clock::now();
    if (refit) {
      last_fit = last_hint;
      new_data = profile_changed = false;
    }
  }

  void maybe_adapt() {
    const Clock::time_point now = Clock::now();
    const auto since = [&](Clock::time_point t) { return std::chrono::duration<double>(now - t).count(); };
    const bool refit = profile_changed || (new_data && since(last_fit) >= opt.refit_interval);
    if (refit || config_changed || restart_news || since(last_hint) >= opt.hint_interval)
      publish(refit, AdaptRequest::Propose::kIfBetter);
    config_changed = restart_news = false;
  }

  void apply_config(int a, int s, const char* why) {
    if (a == atomic && s == accum) return;
    atomic = a;
    accum = s;
    steps_since_config = 0;
    config_changed = true;
    backend->reset();
    if (rank == 0 && opt.verbose >= 1)
      log(rank, "step %lld: batch %lld = %d replica(s) x atomic %d x %d micro-step(s) (%s)", step, total_batch(),
          replicas, atomic, accum + 1, why);
  }

  // --- Collective helpers ---------------------------------------------------
  // Number of ranks for which `failed` is true.
  int count_failures(bool failed) {
    double v = failed ? 1 : 0;
    comm->start_allreduce(&v, 1);
    comm->wait_allreduce();
    return static_cast<int>(v);
  }

  // --- Checkpoints ----------------------------------------------------------
  void schedule_periodic() {
    next_periodic = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(opt.checkpoint_interval));
  }

  // Rank 0's verdict on a store operation, for every rank (RootMessage): a
  // superseded run (CheckpointStore's fencing) makes share_from_root()
  // throw SupersededError on every rank: the training must stop.
  static RootMessage refusal(RootMessage::Kind kind, const char* reason) {
    RootMessage m;
    m.kind = kind;
    m.reason = reason;
    return m;
  }

  // Takes a checkpoint; returns "" when it is committed, else why not (the
  // same text on every rank).
  std::string take_checkpoint() {
    const Clock::time_point began = Clock::now();
    RootMessage begun;
    if (rank == 0) {
      schedule_periodic();  // any checkpoint, taken or tried, restarts the interval
      try {
        begun.dir = store.begin(step);
      } catch (const SupersededError& e) {
        begun = refusal(RootMessage::Kind::kSuperseded, e.what());
        log(rank, "checkpoint at step %lld refused: %s", step, e.what());
      } catch (const std::exception& e) {
        begun = refusal(RootMessage::Kind::kFailed, e.what());
        log(rank, "checkpoint at step %lld not taken: %s", step, e.what());
      }
    }
    begun = share_from_root(*comm, rank, begun);
    if (!begun.ok()) return "not taken: " + begun.reason;
    const std::string& dir = begun.dir;
    bool failed = false;
    try {
      if (save_fn) save_fn(CheckpointContext{dir, rank, replicas, step});
      if (rank == 0) write_state(dir, std::chrono::duration<double>(Clock::now() - began).count());
    } catch (const std::exception& e) {
      failed = true;
      log(rank, "checkpoint at step %lld failed: %s", step, e.what());
    } catch (...) {  // the other ranks wait in count_failures(): never leave without them
      failed = true;
      log(rank, "checkpoint at step %lld failed: the checkpoint callback threw a non-standard exception", step);
    }
    // Also the barrier: every rank has written its part before the commit.
    if (const int n = count_failures(failed); n > 0) {
      if (rank == 0) store.abort(dir);
      return "writing it failed on " + std::to_string(n) + " rank(s) (see their messages); the previous one stays";
    }
    RootMessage committed;
    if (rank == 0) {
      try {
        const std::string final_dir = store.commit(dir);
        if (opt.verbose >= 1) log(rank, "checkpoint of step %lld committed: %s", step, final_dir.c_str());
      } catch (const SupersededError& e) {
        committed = refusal(RootMessage::Kind::kSuperseded, e.what());
        log(rank, "checkpoint at step %lld not committed: %s", step, e.what());
      } catch (const std::exception& e) {
        committed = refusal(RootMessage::Kind::kFailed, e.what());
        log(rank, "checkpoint at step %lld failed: %s", step, e.what());
      }
    }
    committed = share_from_root(*comm, rank, committed);
    return committed.ok() ? std::string() : committed.reason;
  }

  // `save_seconds`: how long this checkpoint has taken so far (rank 0's
  // part of it: its callback; the state's own write is small).
  void write_state(const std::string& dir, double save_seconds) {
    AgentState s;
    s.save_seconds = std::min(save_seconds, hint_fields::kMaxRestartSeconds);
    s.job_id = env.job_id;
    s.restart_count = env.restart_count;
    s.step = step;
    s.samples = samples;
    s.progress = progress;
    s.time = unix_now();
    s.limits = opt.limits;
    s.config = HintConfig{nodes, replicas, atomic, accum};
    s.estimator_init_batch = estimator.init_batch();
    s.estimator = estimator.state();
    s.gpu_type = gpu_type;
    if (adapter) s.perf = adapter->perf();
    s.profile = profile.entries();
    s.type_perf = type_perf;
    s.type_profiles = type_profiles;
    const std::string err = write_file_atomic(dir + "/" + agent_detail::kAgentStateFile,
                                              agent_detail::emit_agent_state(s));
    if (!err.empty()) throw std::runtime_error(err);
  }

  // Every resize signal this process has received counts as answered.
  void mark_signals_handled() {
    seen_signals = agent_detail::ResizeSignal::received();
    agent_detail::ResizeSignal::set_handled(seen_signals);
  }

  // The program's last word before Slurm's requeue ends the process: every
  // rank's, before rank 0 acknowledges (the requeue follows the ack).
  void before_requeue() {
    try {
      if (requeue_fn) requeue_fn();
    } catch (const std::exception& e) {
      log(rank, "the requeue callback failed (%s); the resize goes on", e.what());
    } catch (...) {
      log(rank, "the requeue callback threw a non-standard exception; the resize goes on");
    }
    comm->barrier();
  }

  StepAction resize() {
    if (rank == 0 && opt.verbose >= 1) log(rank, "resize requested by the scheduler: checkpointing at step %lld", step);
    const std::string failure = take_checkpoint();
    // A signal that reached this rank after its synchronize() (another rank
    // had it before) or during the checkpoint is a late copy of the same
    // burst (slurmd delivers to the nodes a little apart): the checkpoint
    // answers it too; counting only packet_signals would flag a second
    // resize at the next step. One that comes during the wait below is a
    // new request (sched/pollux may have cancelled this resize and decided
    // another), acted on after it.
    mark_signals_handled();
    if (!failure.empty()) {
      if (rank == 0) log(rank, "no checkpoint (%s), so no requeue acknowledgement; training goes on", failure.c_str());
      return StepAction::kContinue;
    }
    before_requeue();
    bool acked = true;
    if (rank == 0) {
      last_checkpoint = HintCheckpoint{step, unix_now(), opt.requeue_mode == RequeueMode::kWait};
      publish(false, AdaptRequest::Propose::kNo);
      // The acknowledgement is on disk before we wait, or we say why not.
      if (const std::string err = adapter->flush(); !err.empty() && opt.requeue_mode == RequeueMode::kWait) {
        acked = false;
        log(rank, "checkpoint of step %lld committed, but its acknowledgement could not be written (%s): the "
            "scheduler requeues the job once its checkpoint timeout passes; waiting up to %g s", step, err.c_str(),
            opt.requeue_wait);
      }
    }
    if (opt.requeue_mode == RequeueMode::kExit) {
      if (rank == 0 && opt.verbose >= 1)
        log(rank, "exiting with code %d for Slurm to requeue the job (RequeueExit)", opt.requeue_exit_code);
      return StepAction::kRequeueExit;
    }
    if (rank == 0 && acked && opt.verbose >= 1)
      log(rank, "checkpoint acknowledged in the hint; waiting up to %g s to be requeued", opt.requeue_wait);
    // Slurm's requeue ends this process; if it does not come, resume.
    const Clock::time_point until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.requeue_wait));
    while (Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (rank == 0) {
      log(rank, "not requeued within %g s: resuming at %d replica(s)", opt.requeue_wait, replicas);
      last_checkpoint->ready_for_requeue = false;
      publish(false, AdaptRequest::Propose::kNo);
      adapter->flush();
    }
    comm->barrier();
    return StepAction::kContinue;
  }

  // --- Restore --------------------------------------------------------------
  // The job's first run in the default directory: whatever is there is an
  // earlier job's that had the same id; renamed, not removed.
  void set_aside_earlier_job() {
    struct stat st {};
    if (::lstat(store.root().c_str(), &st) != 0) return;
    const std::string aside = store.root() + ".earlier-" + std::to_string(static_cast<long long>(::time(nullptr)));
    if (::rename(store.root().c_str(), aside.c_str()) != 0)
      throw std::runtime_error("cannot set aside an earlier job's " + store.root() + ": " + std::strerror(errno));
    log(rank, "first run of job %u: an earlier job's checkpoints in %s moved to %s", env.job_id,
        store.root().c_str(), aside.c_str());
  }

  bool restore() {
    // Rank 0 finds and reads the checkpoint; everyone gets its directory
    // and agent state (no directory: none).
    RootMessage found;
    if (rank == 0) {
      try {
        if (env.restart_count == 0 && default_job_checkpoint_root(opt, env)) set_aside_earlier_job();
        store.claim();  // this run owns the checkpoints from now on
        if (const std::optional<std::string> latest = store.latest()) {
          const FileRead f = read_file_checked(*latest + "/" + agent_detail::kAgentStateFile, kMaxStateBytes);
          if (!f) throw std::runtime_error(f.error);
          found.dir = *latest;
          found.state = f.data;
        }
      } catch (const SupersededError& e) {
        found = refusal(RootMessage::Kind::kSuperseded, e.what());
      } catch (const std::exception& e) {
        found = refusal(RootMessage::Kind::kFailed, e.what());
      }
    }
    found = share_from_root(*comm, rank, found);
    if (!found.ok()) throw std::runtime_error("restore from " + store.root() + ": " + found.reason);
    if (found.dir.empty()) {
      if (rank == 0 && env.restart_count > 0)
        log(rank, "restart %d but no checkpoint in %s: starting from scratch", env.restart_count, store.root().c_str());
      return false;
    }
    const std::string& dir = found.dir;
    AgentState s;
    try {
      s = agent_detail::parse_agent_state(found.state);
    } catch (const std::exception& e) {
      throw std::runtime_error(dir + "/" + agent_detail::kAgentStateFile + ": " + e.what());
    }
    // Slurm's restart count never goes down within a job: a checkpoint of a
    // later restart than this one was left by an earlier job with the same id
    // (ids start again when slurmctld's state is wiped). Resuming from it, or
    // checkpointing beside it, would mix two trainings.
    if (env.job_id != 0 && s.job_id == env.job_id && s.restart_count > env.restart_count)
      throw std::runtime_error(dir + " was written at restart " + std::to_string(s.restart_count) + " of job " +
                               std::to_string(s.job_id) + ", but this job is at restart " +
                               std::to_string(env.restart_count) + ": it belongs to an earlier job with the same id; "
                               "move " + store.root() + " away or set POLLUX_CHECKPOINT_DIR");
    bool failed = false;
    try {
      if (load_fn) load_fn(CheckpointContext{dir, rank, replicas, s.step});
    } catch (const std::exception& e) {
      failed = true;
      log(rank, "restore from %s failed: %s", dir.c_str(), e.what());
    } catch (...) {
      failed = true;
      log(rank, "restore from %s failed: the restore callback threw a non-standard exception", dir.c_str());
    }
    if (const int n = count_failures(failed); n > 0)
      throw std::runtime_error("restore from " + dir + " failed on " + std::to_string(n) + " rank(s)");

    step = s.step;
    samples = s.samples;
    progress = s.progress;
    if (s.estimator_init_batch == opt.limits.init_batch) {
      if (!estimator.restore(s.estimator) && rank == 0)
        log(rank, "the gradient statistics in %s are not valid: they start afresh", dir.c_str());
    } else if (rank == 0) {
      log(rank, "initial batch changed from %g to %g: gradient statistics start afresh", s.estimator_init_batch,
          opt.limits.init_batch);
    }
    const std::string ran_on = s.gpu_type;
    if (agent_detail::switch_gpu_type(s, gpu_type) && rank == 0 && opt.verbose >= 1)
      log(rank, "the checkpoint was taken on GPU type %s, this run is on %s: %s, the fit on %s kept",
          ran_on.c_str(), gpu_type.empty() ? "an unknown type" : gpu_type.c_str(),
          s.perf ? (s.profile.empty() ? "this type's earlier fit resumes with a new profile"
                                      : "this type's earlier fit and profile resume")
                 : "a new profile and fit for this type",
          ran_on.c_str());
    profile.assign(s.profile);
    type_perf = s.type_perf;
    type_profiles = s.type_profiles;
    if (s.job_id != env.job_id && rank == 0)
      log(rank, "the checkpoint in %s is of job %u, this is job %u", dir.c_str(), s.job_id, env.job_id);
    backend->reset();
    steps_since_config = 0;
    last_checkpoint = HintCheckpoint{s.step, s.time, false};
    restored_save_seconds = s.save_seconds;

    // Re-pick the batch size for this allocation: rank 0 decides for all.
    const BatchConfig init = initial_config(opt.limits, replicas);
    RootMessage choice;
    choice.atomic_batch = init.atomic_batch;
    choice.accum_steps = init.accum_steps;
    if (rank == 0) {
      if (s.perf) adapter->set_perf(*s.perf);
      atomic = init.atomic_batch;
      accum = init.accum_steps;
      publish(true, AdaptRequest::Propose::kAlways);
      adapter->flush();
      // Without a new one (M0 is best) a proposal from before restore() may wait: it is stale.
      if (const auto p = adapter->take_proposal(); p && is_current(p->based_on)) {
        choice.atomic_batch = p->atomic_batch;
        choice.accum_steps = p->accum_steps;
      }
    }
    choice = share_from_root(*comm, rank, choice);
    atomic = init.atomic_batch;
    accum = init.accum_steps;
    apply_config(choice.atomic_batch, choice.accum_steps, "re-picked after restore");
    config_changed = true;
    update_gain();
    if (rank == 0 && opt.verbose >= 1)
      log(rank, "restored step %lld (progress %.2f, %lld samples) from %s (written by %d replica(s)); now %d replica(s) on %d node(s), batch %lld",
          step, progress, samples, dir.c_str(), s.config.replicas, replicas, nodes, total_batch());
    return true;
  }

  bool is_current(const HintConfig& c) const {
    return c.nodes == nodes && c.replicas == replicas && c.atomic_batch == atomic && c.accum_steps == accum;
  }

  // --- Step protocol ----------------------------------------------------------
  void synchronize(GradientBuffer& grad) {
    if (in_micro) throw std::logic_error("synchronize() inside a micro-step: call micro_step_end() first");
    if (micro_done != accum + 1)
      throw std::logic_error("synchronize() after " + std::to_string(micro_done) + " micro-step(s); the configuration needs " +
                             std::to_string(accum + 1) + " (accum_steps() + 1)");
    const StepRecord rec = backend->take_record();
    std::fill(std::begin(packet), std::end(packet), 0.0);
    agent_detail::ResizeSignal::reclaim();  // behind a handler the program installed since
    packet_signals = agent_detail::ResizeSignal::received();
    packet[kResize] = packet_signals != seen_signals ? 1 : 0;
    // Rank 0's clock decides, so that every rank checkpoints at the same step.
    if (rank == 0 && opt.checkpoint_interval > 0 && Clock::now() >= next_periodic) packet[kCheckpoint] = 1;
    // The signal, not a resize, to a program without a handler of its own
    // (Slurm's --signal warning): a checkpoint now.
    if (rank == 0 && agent_detail::ResizeSignal::checkpoint_requests() != seen_checkpoint_requests) {
      seen_checkpoint_requests = agent_detail::ResizeSignal::checkpoint_requests();
      packet[kCheckpoint] = 1;
    }
    if (rec.valid) {
      packet[kValid] = 1;
      packet[kLocalSqr] = rec.local_sqr_sum;
      packet[kMicroSteps] = rec.micro_steps;
      packet[kLocalGrads] = rec.local_grads > 0 ? rec.local_grads : rec.micro_steps;
      packet[kGradTime] = rec.grad_time_sum;
      packet[kStepTime] = rec.step_time;
    }
    if (adapter) {
      // A proposal computed before the configuration changed (e.g. by
      // set_batch_config()) improves on a configuration no longer in use.
      if (const auto p = adapter->take_proposal(); p && is_current(p->based_on)) {
        packet[kPropose] = 1;
        packet[kAtomic] = p->atomic_batch;
        packet[kAccum] = p->accum_steps;
      }
    }
    // What this step is measured under (its record is reduced next step).
    const TwoStep pair = two_step_phase();
    current_ctx = RecordContext{atomic, accum, steps_since_config >= opt.warmup_steps, pair != TwoStep::kOff,
                                skip_current};
    comm->start_allreduce(packet, kPacketSize);
    try {
      backend->synchronize(grad, replicas * (accum + 1), pair, *comm);
    } catch (...) {
      comm->wait_allreduce();
      throw;
    }
    comm->wait_allreduce();
    absorb(rec);
    record_ctx = current_ctx;
    synced = true;
    // The first all-reduce had every rank's part: every rank's agent, and
    // its handler, exists. Only now may sched/pollux signal a resize (a
    // rank still starting would die of it, or fail a system call).
    if (!ready) {
      ready = true;
      if (rank == 0) publish(false, AdaptRequest::Propose::kNo);
    }
  }

  // One replica measures the noise with pairs of steps when it has no two
  // gradients of one step: without accumulation, or in the framework-neutral
  // mode (which reports the accumulated gradient).
  TwoStep two_step_phase() const {
    if (replicas != 1 || (accum != 0 && external == nullptr)) return TwoStep::kOff;
    return steps_since_config % 2 == 0 ? TwoStep::kKeep : TwoStep::kCompare;
  }

  // Applies the reduced packet: statistics and profile of the previous step,
  // the resize flag, the new configuration.
  void absorb(const StepRecord& rec) {
    if (packet[kResize] > 0) resize_requested = true;
    if (packet[kCheckpoint] > 0) periodic_due = true;
    if (packet[kPropose] > 0)
      pending_config = std::make_pair(static_cast<int>(packet[kAtomic]), static_cast<int>(packet[kAccum]));
    const RecordContext& c = record_ctx;
    if (packet[kValid] != replicas || !rec.valid || c.skipped) return;
    const double n = packet[kMicroSteps];
    const double step_batch = static_cast<double>(replicas) * c.atomic * (c.accum + 1);
    if (c.two_step) {
      if (rec.has_prev) {
        const double mean_sqr = 0.25 * (rec.prev_sqr + rec.sync_sqr + 2 * rec.dot_prev);
        estimator.update_two_step(rec.prev_sqr, rec.sync_sqr, mean_sqr, step_batch);
      }
    } else {
      // Each local gradient is the mean over step_batch / grads examples.
      const double grads = packet[kLocalGrads];
      estimator.update(packet[kLocalSqr] / grads, rec.sync_sqr, static_cast<int>(grads), step_batch / grads);
    }
    if (c.profiled) {
      const bool matured = profile.add(nodes, replicas, c.atomic, packet[kGradTime] / n, packet[kStepTime] / replicas,
                                       opt.min_profile_steps);
      new_data = true;
      profile_changed |= matured;
    }
  }

  // At the end of this run's first optimizer step (rank 0): what this
  // restart cost, the restored checkpoint's save and this process's start
  // until now; the time since the agent was made where /proc cannot say.
  void measure_restart() {
    first_step_done = true;
    if (rank != 0) return;
    const double started = process_age().value_or(std::chrono::duration<double>(Clock::now() - created).count());
    restart_seconds = std::min(restored_save_seconds + started, hint_fields::kMaxRestartSeconds);
    restart_news = true;
    if (opt.verbose >= 1)
      log(rank, "restart time %.2f s (checkpoint save %.2f s, process start to the first step %.2f s)",
          restart_seconds, restored_save_seconds, started);
  }

  StepAction step_end() {
    if (!synced) throw std::logic_error("step_end() without synchronize()");
    synced = false;
    micro_done = 0;
    ++step;
    samples += total_batch();  // a skipped update consumed its batch all the same
    if (!skip_current) progress += gain;
    skip_current = false;
    ++steps_since_config;
    if (!first_step_done) measure_restart();
    if (pending_config) {
      apply_config(pending_config->first, pending_config->second, "goodput model");
      pending_config.reset();
    }
    StepAction action = StepAction::kContinue;
    if (resize_requested) {
      resize_requested = false;
      action = resize();
      periodic_due = false;  // the resize's checkpoint is as recent
    } else if (periodic_due) {
      periodic_due = false;
      const std::string failure = take_checkpoint();  // the previous one stays: training goes on
      if (rank == 0 && failure.empty()) {
        last_checkpoint = HintCheckpoint{step, unix_now(), false};
        if (opt.verbose >= 1) log(rank, "periodic checkpoint of step %lld committed", step);
      } else if (rank == 0) {
        log(rank, "periodic checkpoint of step %lld failed (%s); next try in one interval", step, failure.c_str());
      }
    }
    update_gain();
    if (rank == 0 && action == StepAction::kContinue) maybe_adapt();
    return action;
  }
};

Agent::Agent(std::unique_ptr<Communicator> comm, std::unique_ptr<StepBackend> backend, AgentOptions options,
             JobEnvironment env)
    : impl_(std::make_unique<Impl>(std::move(comm), std::move(backend), std::move(options), std::move(env))) {}

Agent::~Agent() = default;

void Agent::on_checkpoint(CheckpointFn fn) { impl_->save_fn = std::move(fn); }
namespace {
const char* given_checkpoint_dir(const AgentOptions& o) {
  if (!o.checkpoint_dir.empty()) return o.checkpoint_dir.c_str();
  const char* v = std::getenv("POLLUX_CHECKPOINT_DIR");
  return v != nullptr && *v != '\0' ? v : nullptr;
}

const char* home_dir() {
  const char* v = std::getenv("HOME");
  return v != nullptr && *v == '/' ? v : nullptr;
}
}  // namespace

bool default_job_checkpoint_root(const AgentOptions& o, const JobEnvironment& e) {
  return given_checkpoint_dir(o) == nullptr && e.job_id != 0 && home_dir() != nullptr;
}

// Not the submit directory (often the source tree); the user's home, which
// a cluster's nodes share, keyed by cluster and job id. The cluster's name
// alone does not tell clusters apart (every local cluster is "pollux", and
// two may share a home): the key adds a hash of slurmctld's
// StateSaveLocation, where the cluster keeps its job ids, which every
// node's slurm.conf names. The id alone does not make it the job's (Slurm
// reuses ids, and its submit time, which changes at every requeue, is not
// exported): a run at restart count 0 is a job's first, so restore() sets
// aside what an earlier job left there.
std::string checkpoint_root(const AgentOptions& o, const JobEnvironment& e) {
  if (const char* given = given_checkpoint_dir(o)) return given;
  if (!default_job_checkpoint_root(o, e)) return "./pollux-ckpt/local";
  const std::string base = std::string(home_dir()) + "/.cache/pollux/checkpoints/";
  const std::string cluster = e.cluster.empty() ? "slurm" : e.cluster;
  const std::string id = std::to_string(e.job_id);
  const auto state = read_slurm_conf_value(slurm_conf_path(), "StateSaveLocation");
  if (!state || state->empty()) return base + cluster + "/" + id;  // no slurm.conf to read: the name alone
  std::uint32_t h = 2166136261u;  // FNV-1a: short, stable across builds and hosts
  for (const unsigned char c : *state) h = (h ^ c) * 16777619u;
  char key[16];
  std::snprintf(key, sizeof key, "-%08x", static_cast<unsigned>(h));
  const std::string keyed = base + cluster + key + "/" + id;
  // A job requeued across the upgrade that introduced the key keeps the
  // checkpoints its earlier runs wrote under the name alone (a first run
  // never takes them: they may be another cluster's job with this id).
  const std::string unkeyed = base + cluster + "/" + id;
  struct stat st {};
  if (e.restart_count > 0 && ::stat(keyed.c_str(), &st) != 0 && ::stat(unkeyed.c_str(), &st) == 0) return unkeyed;
  return keyed;
}

bool checkpoint_waiting(const AgentOptions& options) {
  const JobEnvironment env = JobEnvironment::from_environment();
  if (env.restart_count == 0 && default_job_checkpoint_root(options, env)) return false;  // a first run
  return CheckpointStore(checkpoint_root(options, env), env.restart_count).latest().has_value();
}

void Agent::on_restore(CheckpointFn fn) { impl_->load_fn = std::move(fn); }
void Agent::on_requeue(RequeueFn fn) { impl_->requeue_fn = std::move(fn); }
bool Agent::restore() { return impl_->restore(); }

void Agent::checkpoint() {
  if (impl_->micro_done != 0 || impl_->synced) throw std::logic_error("checkpoint() inside a step: call it after step_end()");
  if (const std::string failure = impl_->take_checkpoint(); !failure.empty())
    throw std::runtime_error("checkpoint at step " + std::to_string(impl_->step) + " failed: " + failure);
  impl_->last_checkpoint = HintCheckpoint{impl_->step, unix_now(), false};
}

int Agent::atomic_batch() const noexcept { return impl_->atomic; }
int Agent::accum_steps() const noexcept { return impl_->accum; }
long long Agent::total_batch() const noexcept { return impl_->total_batch(); }
double Agent::lr_gain() const noexcept { return impl_->gain; }

void Agent::set_batch_config(int atomic, int accum) {
  Impl& d = *impl_;
  if (d.micro_done != 0 || d.in_micro || d.synced)
    throw std::logic_error("set_batch_config() inside a step: call it after step_end()");
  const BatchLimits& l = d.opt.limits;
  if (atomic < l.min_atomic || atomic > l.max_atomic)
    throw std::invalid_argument("atomic batch " + std::to_string(atomic) + " outside the job's limits [" +
                                std::to_string(l.min_atomic) + ", " + std::to_string(l.max_atomic) + "]");
  if (accum < 0 || (accum > 0 && !l.accumulation))
    throw std::invalid_argument("accumulation steps " + std::to_string(accum) +
                                (l.accumulation ? " is negative" : " but the job does not allow accumulation"));
  d.apply_config(atomic, accum, "set by the application");
  d.update_gain();
}
long long Agent::step() const noexcept { return impl_->step; }
long long Agent::samples_seen() const noexcept { return impl_->samples; }
double Agent::progress() const noexcept { return impl_->progress; }
int Agent::rank() const noexcept { return impl_->rank; }
int Agent::replicas() const noexcept { return impl_->replicas; }
int Agent::nodes() const noexcept { return impl_->nodes; }
const JobEnvironment& Agent::job() const noexcept { return impl_->env; }
const AgentOptions& Agent::options() const noexcept { return impl_->opt; }
const std::string& Agent::checkpoint_dir() const noexcept { return impl_->store.root(); }

std::string Agent::hint_file() const {
  return impl_->spool_dir.empty() ? std::string() : hint_path(impl_->spool_dir, impl_->env.job_id);
}

std::optional<GradStats> Agent::grad_stats() const {
  if (!impl_->estimator.has_estimate()) return std::nullopt;
  return impl_->estimator.stats();
}

std::optional<PerfParams> Agent::perf_params() const {
  if (!impl_->adapter) return std::nullopt;
  return impl_->adapter->perf();
}

std::vector<ProfileSample> Agent::profile() const { return impl_->profile.samples(); }

void Agent::micro_step_begin() {
  if (impl_->in_micro) throw std::logic_error("micro_step_begin() twice without micro_step_end()");
  if (impl_->synced) throw std::logic_error("micro_step_begin() after synchronize(): call step_end() first");
  impl_->in_micro = true;
  impl_->backend->micro_begin();
}

void Agent::micro_step_end(const GradientBuffer& grad) {
  if (!impl_->in_micro) throw std::logic_error("micro_step_end() without micro_step_begin()");
  if (impl_->external != nullptr && grad.count > 0)
    throw std::logic_error("micro_step_end(buffer) on a framework-neutral agent: call micro_step_end() without one");
  impl_->in_micro = false;
  ++impl_->micro_done;
  impl_->backend->micro_end(grad, impl_->micro_done <= impl_->accum);
}

void Agent::synchronize(GradientBuffer& grad) {
  if (impl_->external != nullptr)
    throw std::logic_error("synchronize(buffer) on a framework-neutral agent: report the norms with synchronized()");
  impl_->synchronize(grad);
}

void Agent::micro_step_end() {
  if (impl_->external == nullptr)
    throw std::logic_error("micro_step_end() without a gradient on a buffer agent (see make_external_agent())");
  micro_step_end(GradientBuffer{});
}

void Agent::synchronized(const GradientNorms& n) {
  Impl& d = *impl_;
  if (d.external == nullptr)
    throw std::logic_error("synchronized() on a buffer agent: it all-reduces the gradient in synchronize()");
  const auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (bad(n.local_sqr) || bad(n.sync_sqr) || (n.has_prev && (bad(n.prev_sqr) || !std::isfinite(n.dot_prev))))
    throw std::invalid_argument("synchronized(): squared norms must be finite and non-negative (local " +
                                std::to_string(n.local_sqr) + ", averaged " + std::to_string(n.sync_sqr) + ")");
  if (n.local_grads != 1 && n.local_grads != d.accum + 1)
    throw std::invalid_argument("synchronized(): local_grads " + std::to_string(n.local_grads) + " is neither 1 nor " +
                                std::to_string(d.accum + 1) + " (accum_steps() + 1)");
  d.external->stage(n);
  GradientBuffer none;
  d.synchronize(none);
}

void Agent::synchronized_late(const StepMeasurement* previous, bool skipped) {
  Impl& d = *impl_;
  if (d.external == nullptr)
    throw std::logic_error("synchronized_late() on a buffer agent: it all-reduces the gradient in synchronize()");
  StepRecord rec;
  if (previous != nullptr) {
    const GradientNorms& n = previous->norms;
    const auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
    // Non-finite norms (an overflowed fp16 step) or times carry nothing: the
    // record stays invalid rather than an error, the step counts no statistics.
    const bool ok = !bad(n.local_sqr) && !bad(n.sync_sqr) &&
                    !(n.has_prev && (bad(n.prev_sqr) || !std::isfinite(n.dot_prev))) &&
                    (n.local_grads == 1 || n.local_grads == d.record_ctx.accum + 1) && previous->micro_steps > 0 &&
                    !bad(previous->grad_time_sum) && previous->grad_time_sum > 0 && !bad(previous->step_time) &&
                    previous->step_time > 0;
    if (ok) {
      rec.valid = true;
      rec.micro_steps = previous->micro_steps;
      rec.local_sqr_sum = n.local_sqr;
      rec.local_grads = n.local_grads;
      rec.sync_sqr = n.sync_sqr;
      rec.grad_time_sum = previous->grad_time_sum;
      rec.step_time = previous->step_time;
      if (d.record_ctx.two_step && n.has_prev) {
        rec.has_prev = true;
        rec.prev_sqr = n.prev_sqr;
        rec.dot_prev = n.dot_prev;
      }
    }
  }
  d.external->stage_previous(rec);
  d.skip_current = skipped;
  GradientBuffer none;
  try {
    d.synchronize(none);
  } catch (...) {
    d.skip_current = false;
    throw;
  }
}

TwoStep Agent::two_step_phase() const noexcept { return impl_->two_step_phase(); }
bool Agent::external() const noexcept { return impl_->external != nullptr; }
StepAction Agent::step_end() { return impl_->step_end(); }

std::unique_ptr<Agent> make_external_agent(std::unique_ptr<Communicator> comm, AgentOptions options) {
  if (!comm) comm = make_local_communicator();
  return std::make_unique<Agent>(std::move(comm), agent_detail::make_external_backend(), std::move(options),
                                 JobEnvironment::from_environment());
}

std::unique_ptr<Agent> make_local_agent(AgentOptions options) {
  return std::make_unique<Agent>(make_local_communicator(), make_cpu_backend(), std::move(options),
                                 JobEnvironment::from_environment());
}

}  // namespace pollux

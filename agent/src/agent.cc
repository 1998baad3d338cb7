// The agent: the step protocol, which ties together what it measures
// (step_statistics.h), the hints (hint_publisher.h), checkpoints
// (checkpoint_protocol.h), resizes (resize_protocol.h) and the restart time
// (restart_time.h), and the public Agent (see pollux/agent.h and
// doc/agent.md). Every rank takes its decisions at a step boundary from the
// all-reduced step packet (step_packet.h).
#include "pollux/agent.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <sys/stat.h>

#include "agent_state.h"
#include "checkpoint_protocol.h"
#include "external_backend.h"
#include "hint_publisher.h"
#include "log.h"
#include "memory_limit.h"
#include "pollux/atomic_file.h"
#include "pollux/agent_backend.h"
#include "pollux/spool_dir.h"
#include "resize_protocol.h"
#include "restart_time.h"
#include "root_message.h"
#include "step_packet.h"
#include "step_statistics.h"
#include "unix_time.h"

namespace pollux {

using agent_detail::AgentState;
using agent_detail::HintPublisher;
using agent_detail::log;
using agent_detail::RootMessage;
using agent_detail::share_from_root;
using agent_detail::StepStatistics;
using agent_detail::unix_now;

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
// Squared norms are finite and non-negative; a dot product finite.
bool valid_norms(const GradientNorms& n) {
  const auto sqr = [](double v) { return std::isfinite(v) && v >= 0; };
  return sqr(n.local_sqr) && sqr(n.sync_sqr) && (!n.has_prev || (sqr(n.prev_sqr) && std::isfinite(n.dot_prev)));
}
}  // namespace

struct Agent::Impl {
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<StepBackend> backend;
  agent_detail::ExternalBackend* external = nullptr;  // the backend, in the framework-neutral mode
  AgentOptions opt;
  JobEnvironment env;
  int rank = 0, replicas = 1, nodes = 1;
  std::string spool_dir;  // "" = no hints

  // The configuration and where training stands.
  int atomic = 1, accum = 0;
  double gain = 1;
  long long step = 0, samples = 0;
  double progress = 0;
  int steps_since_config = 0;
  int largest_run = 0;  // the largest micro-batch that completed a step in this process
  bool sharded = false;  // set_sharded(): the throughput model's form

  // The parts, each with its own job.
  StepStatistics stats;
  agent_detail::CheckpointProtocol checkpoints;
  agent_detail::ResizeProtocol resizes;
  agent_detail::RestartTime restart;
  std::unique_ptr<HintPublisher> hints;  // rank 0

  // Step protocol state.
  int micro_done = 0;
  bool in_micro = false, synced = false;
  StepStatistics::Context record_ctx, current_ctx;
  bool skip_current = false;  // synchronized_late(): this step's update is left out
  bool resize_requested = false;
  bool periodic_due = false;  // every rank: take a periodic checkpoint at this step's end
  std::optional<std::pair<int, int>> pending_config;
  double packet[agent_detail::kPacketSize] = {};

  Impl(std::unique_ptr<Communicator> c, std::unique_ptr<StepBackend> b, AgentOptions o, JobEnvironment e)
      : comm(std::move(c)),
        backend(std::move(b)),
        opt((o.validate(), std::move(o))),
        env(std::move(e)),
        stats(opt),
        checkpoints(*comm, opt, env, [this] { return agent_state(); }),
        resizes(*comm, opt, env) {
    external = dynamic_cast<agent_detail::ExternalBackend*>(backend.get());
    rank = comm->rank();
    replicas = comm->size();
    nodes = comm->nodes();
    if (opt.write_hints && env.job_id != 0) spool_dir = opt.spool_dir.empty() ? resolve_spool_dir() : opt.spool_dir;
    const BatchConfig init = initial_config(opt.limits, replicas);
    atomic = init.atomic_batch;
    accum = init.accum_steps;
    if (rank == 0) {
      hints = std::make_unique<HintPublisher>(spool_dir, rank, opt, [this] { return make_hint(); });
      if (opt.verbose >= 1) {
        log(rank, "job %u (restart %d): %d replica(s) on %d node(s); M0=%g, M_max=%g, atomic in [%d, %d]%s; hints %s; checkpoints in %s",
            env.job_id, env.restart_count, replicas, nodes, opt.limits.init_batch, opt.limits.max_batch,
            opt.limits.min_atomic, opt.limits.max_atomic, opt.limits.accumulation ? ", accumulation" : "",
            spool_dir.empty() ? "off" : hint_path(spool_dir, env.job_id).c_str(), checkpoints.root().c_str());
        if (!stats.gpu_type().empty()) log(rank, "GPU type %s", stats.gpu_type().c_str());
      }
      if (env.ntasks > 0 && env.ntasks != replicas)
        log(rank, "SLURM_NTASKS=%d but the communicator has %d rank(s): the agent counts the communicator's",
            env.ntasks, replicas);
      if (env.job_id == 0 && opt.write_hints && opt.verbose >= 1)
        log(rank, "no SLURM_JOB_ID: not a Slurm job, no hint file is written");
      hints->publish(false, HintPublisher::Propose::kNo);
    }
  }

  ~Impl() {
    if (hints) {
      // The last word: a hint with everything measured, no longer listening
      // for resizes.
      resizes.stop_announcing();
      hints->close();
    }
  }

  long long total_batch() const { return static_cast<long long>(replicas) * atomic * (accum + 1); }

  void update_gain() { gain = stats.gain(total_batch()); }

  // The hint as the agent stands (HintPublisher adds the time and the checkpoint).
  Hint make_hint() const {
    Hint h;
    h.job_id = env.job_id;
    h.uid = env.uid;
    h.restart_count = env.restart_count;
    h.limits = opt.limits;
    stats.describe(h, replicas);
    h.config = HintConfig{nodes, replicas, atomic, accum};
    h.progress = progress;
    h.step = step;
    h.restart_seconds = restart.seconds();
    h.resize_signal = resizes.announced_signal();
    return h;
  }

  // Rank 0's agent state for a checkpoint (CheckpointProtocol adds the save time).
  AgentState agent_state() const {
    AgentState s;
    s.job_id = env.job_id;
    s.restart_count = env.restart_count;
    s.step = step;
    s.samples = samples;
    s.progress = progress;
    s.time = unix_now();
    s.limits = opt.limits;
    s.config = HintConfig{nodes, replicas, atomic, accum};
    stats.save(s);
    if (hints) s.perf = hints->adapter().perf();
    return s;
  }

  void apply_config(int a, int s, const char* why) {
    if (a == atomic && s == accum) return;
    atomic = a;
    accum = s;
    steps_since_config = 0;
    if (hints) hints->config_changed();
    backend->reset();
    if (rank == 0 && opt.verbose >= 1)
      log(rank, "step %lld: batch %lld = %d replica(s) x atomic %d x %d micro-step(s) (%s)", step, total_batch(),
          replicas, atomic, accum + 1, why);
  }

  bool is_current(const HintConfig& c) const {
    return c.nodes == nodes && c.replicas == replicas && c.atomic_batch == atomic && c.accum_steps == accum;
  }

  // A checkpoint committed at this step (any but a resize's).
  void checkpoint_committed() {
    if (hints) hints->checkpoint_committed(step, false);
  }

  // --- Restore --------------------------------------------------------------
  bool restore() {
    std::optional<agent_detail::CheckpointProtocol::Restored> r = checkpoints.restore();
    const bool lowered = apply_memory_limit(r.has_value());
    if (!r) {
      if (lowered) {  // the learnt limit, from the start of training
        const BatchConfig init = initial_config(opt.limits, replicas);
        apply_config(init.atomic_batch, init.accum_steps, "the job's memory limit");
        update_gain();
        publish_limits_now();
      }
      return false;
    }
    const std::string& dir = r->dir;
    AgentState& s = r->state;
    step = s.step;
    samples = s.samples;
    progress = s.progress;
    stats.restore(s, dir, rank);
    if (s.job_id != env.job_id && rank == 0)
      log(rank, "the checkpoint in %s is of job %u, this is job %u", dir.c_str(), s.job_id, env.job_id);
    backend->reset();
    steps_since_config = 0;
    if (hints) hints->checkpoint_restored(s.step, s.time);
    restart.restored(s.save_seconds);

    // Re-pick the batch size for this allocation: rank 0 decides for all.
    const BatchConfig init = initial_config(opt.limits, replicas);
    RootMessage choice;
    choice.atomic_batch = init.atomic_batch;
    choice.accum_steps = init.accum_steps;
    if (hints) {
      if (s.perf) hints->adapter().set_perf(*s.perf);
      atomic = init.atomic_batch;
      accum = init.accum_steps;
      hints->publish(true, HintPublisher::Propose::kAlways);
      hints->adapter().flush();
      // Without a new one (M0 is best) a proposal from before restore() may wait: it is stale.
      if (const auto p = hints->adapter().take_proposal(); p && is_current(p->based_on)) {
        choice.atomic_batch = p->atomic_batch;
        choice.accum_steps = p->accum_steps;
      }
    }
    choice = share_from_root(*comm, rank, choice);
    atomic = init.atomic_batch;
    accum = init.accum_steps;
    apply_config(choice.atomic_batch, choice.accum_steps, "re-picked after restore");
    if (hints) hints->config_changed();
    update_gain();
    if (rank == 0 && opt.verbose >= 1)
      log(rank, "restored step %lld (progress %.2f, %lld samples) from %s (written by %d replica(s)); now %d replica(s) on %d node(s), batch %lld",
          step, progress, samples, dir.c_str(), s.config.replicas, replicas, nodes, total_batch());
    return true;
  }

  // --- The memory limit (memory_limit.h) --------------------------------------
  std::string memory_limit_path() const { return checkpoints.root() + "/" + agent_detail::kMemoryLimitFile; }

  // Rank 0 reads the limit a run of this job learnt and every rank lowers
  // max_atomic to it: when this run resumes from a checkpoint, or is the
  // same Slurm job; otherwise the file is another training's and is removed.
  // Collective. True when max_atomic went down.
  bool apply_memory_limit(bool restored) {
    using agent_detail::RootMessage;
    RootMessage m;
    if (rank == 0) {
      const std::string path = memory_limit_path();
      struct stat st {};
      if (::lstat(path.c_str(), &st) == 0) {
        const FileRead f = read_file_checked(path, 4096);
        try {
          if (!f) throw std::runtime_error(f.error);
          const agent_detail::MemoryLimit l = agent_detail::parse_memory_limit(f.data);
          if (restored || (env.job_id != 0 && l.job_id == env.job_id)) {
            m.atomic_batch = l.max_atomic;
            if (l.job_id != env.job_id) {  // a new job resumes another's training: the limit is its own now
              agent_detail::MemoryLimit own = l;
              own.job_id = env.job_id;
              if (const std::string err = write_file_atomic(path, agent_detail::emit_memory_limit(own)); !err.empty())
                log(rank, "%s", err.c_str());
            }
          } else {
            log(rank, "%s is of job %u, and this run of job %u resumes from no checkpoint: removed", path.c_str(),
                l.job_id, env.job_id);
            ::unlink(path.c_str());
          }
        } catch (const std::exception& e) {
          m.kind = RootMessage::Kind::kFailed;
          m.reason = path + ": " + e.what() + " (remove it to forget the job's memory limit)";
        }
      }
    }
    m = share_from_root(*comm, rank, m);
    if (!m.ok()) throw std::runtime_error(m.reason);
    if (m.atomic_batch <= 0 || m.atomic_batch >= opt.limits.max_atomic) return false;
    opt.limits.max_atomic = std::max(m.atomic_batch, opt.limits.min_atomic);
    if (rank == 0 && opt.verbose >= 1)
      log(rank, "micro-batches are at most %d: larger ones ran out of memory in an earlier run (%s)",
          opt.limits.max_atomic, memory_limit_path().c_str());
    return true;
  }

  // The hint, written now: the job's limits changed (the scheduler sizes by them).
  void publish_limits_now() {
    if (!hints) return;
    hints->publish(false, HintPublisher::Propose::kNo);
    hints->adapter().flush();
  }

  int out_of_memory(int micro_batch) {
    if (micro_batch < 1)
      throw std::invalid_argument("out_of_memory(): micro-batch " + std::to_string(micro_batch) + " is not positive");
    BatchLimits& l = opt.limits;
    const int limit = agent_detail::lowered_max_atomic(micro_batch, largest_run, l.min_atomic, l.max_atomic);
    l.max_atomic = limit;
    const std::string path = memory_limit_path();
    std::string err;
    try {
      make_directories(checkpoints.root());
    } catch (const std::exception& e) {
      err = e.what();
    }
    if (err.empty()) err = write_file_atomic(path, agent_detail::emit_memory_limit({limit, micro_batch, env.job_id}));
    log(rank, "micro-batch %d ran out of memory: the job's micro-batches are at most %d from now on%s%s", micro_batch,
        limit, err.empty() ? ", kept in " : "; not kept for its next runs: ", err.empty() ? path.c_str() : err.c_str());
    publish_limits_now();
    if (!err.empty())
      throw std::runtime_error("micro-batch " + std::to_string(micro_batch) + " ran out of memory; its limit " +
                               std::to_string(limit) + " holds in this process but not for the job's next runs: " + err);
    return limit;
  }

  // --- Step protocol ----------------------------------------------------------
  void synchronize(GradientBuffer& grad) {
    using namespace agent_detail;
    if (in_micro) throw std::logic_error("synchronize() inside a micro-step: call micro_step_end() first");
    if (micro_done != accum + 1)
      throw std::logic_error("synchronize() after " + std::to_string(micro_done) + " micro-step(s); the configuration needs " +
                             std::to_string(accum + 1) + " (accum_steps() + 1)");
    const StepRecord rec = backend->take_record();
    std::fill(std::begin(packet), std::end(packet), 0.0);
    packet[kResize] = resizes.requested() ? 1 : 0;
    // Rank 0's clock decides, so that every rank checkpoints at the same step.
    if (rank == 0 && checkpoints.periodic_due()) packet[kCheckpoint] = 1;
    // So does the signal as a checkpoint request (not a resize: ResizeProtocol).
    if (rank == 0 && resizes.checkpoint_requested()) packet[kCheckpoint] = 1;
    StepStatistics::contribute(rec, packet);
    if (hints) {
      // A proposal computed before the configuration changed (e.g. by
      // set_batch_config()) improves on a configuration no longer in use.
      if (const auto p = hints->adapter().take_proposal();
          p && is_current(p->based_on) && p->atomic_batch <= opt.limits.max_atomic) {
        packet[kPropose] = 1;
        packet[kAtomic] = p->atomic_batch;
        packet[kAccum] = p->accum_steps;
      }
    }
    // What this step is measured under (its record is reduced next step).
    const TwoStep pair = two_step_phase();
    current_ctx = StepStatistics::Context{atomic, accum, steps_since_config >= opt.warmup_steps, pair != TwoStep::kOff,
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
    if (resizes.all_ranks_ready() && hints) hints->publish(false, HintPublisher::Propose::kNo);
  }

  // One replica measures the noise with pairs of steps when it has no two
  // gradients of one step: without accumulation, or in the framework-neutral
  // mode (which reports the accumulated gradient).
  TwoStep two_step_phase() const {
    if (replicas != 1 || (accum != 0 && external == nullptr)) return TwoStep::kOff;
    return steps_since_config % 2 == 0 ? TwoStep::kKeep : TwoStep::kCompare;
  }

  // Applies the reduced packet: the resize and checkpoint flags, the new
  // configuration, and the previous step's statistics and profile.
  void absorb(const StepRecord& rec) {
    using namespace agent_detail;
    if (packet[kResize] > 0) resize_requested = true;
    if (packet[kCheckpoint] > 0) periodic_due = true;
    if (packet[kPropose] > 0)
      pending_config = std::make_pair(static_cast<int>(packet[kAtomic]), static_cast<int>(packet[kAccum]));
    const StepStatistics::ProfileNews news = stats.absorb(packet, rec, record_ctx, nodes, replicas);
    if (hints) hints->learned(news);
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
    if (restart.step_ended(rank, opt.verbose) && hints) hints->restart_measured();
    largest_run = std::max(largest_run, atomic);
    if (pending_config) {
      apply_config(pending_config->first, pending_config->second, "goodput model");
      pending_config.reset();
    }
    StepAction action = StepAction::kContinue;
    if (resize_requested) {
      resize_requested = false;
      action = resizes.resize(step, checkpoints, hints.get());
      periodic_due = false;  // the resize's checkpoint is as recent
    } else if (periodic_due) {
      periodic_due = false;
      const std::string failure = checkpoints.take(step);  // the previous one stays: training goes on
      if (rank == 0 && failure.empty()) {
        checkpoint_committed();
        if (opt.verbose >= 1) log(rank, "periodic checkpoint of step %lld committed", step);
      } else if (rank == 0) {
        log(rank, "periodic checkpoint of step %lld failed (%s); next try in one interval", step, failure.c_str());
      }
    }
    update_gain();
    if (hints && action == StepAction::kContinue) hints->maybe_publish();
    return action;
  }
};

Agent::Agent(std::unique_ptr<Communicator> comm, std::unique_ptr<StepBackend> backend, AgentOptions options,
             JobEnvironment env)
    : impl_(std::make_unique<Impl>(std::move(comm), std::move(backend), std::move(options), std::move(env))) {}

Agent::~Agent() = default;

void Agent::on_checkpoint(CheckpointFn fn) { impl_->checkpoints.save_fn = std::move(fn); }
void Agent::on_restore(CheckpointFn fn) { impl_->checkpoints.load_fn = std::move(fn); }
void Agent::on_requeue(RequeueFn fn) { impl_->resizes.requeue_fn = std::move(fn); }
bool Agent::restore() { return impl_->restore(); }

void Agent::checkpoint() {
  if (impl_->micro_done != 0 || impl_->synced) throw std::logic_error("checkpoint() inside a step: call it after step_end()");
  if (const std::string failure = impl_->checkpoints.take(impl_->step); !failure.empty())
    throw std::runtime_error("checkpoint at step " + std::to_string(impl_->step) + " failed: " + failure);
  impl_->checkpoint_committed();
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
const std::string& Agent::checkpoint_dir() const noexcept { return impl_->checkpoints.root(); }

std::string Agent::hint_file() const {
  return impl_->spool_dir.empty() ? std::string() : hint_path(impl_->spool_dir, impl_->env.job_id);
}

std::optional<GradStats> Agent::grad_stats() const { return impl_->stats.grad_stats(); }

std::optional<PerfParams> Agent::perf_params() const {
  if (!impl_->hints) return std::nullopt;
  return impl_->hints->adapter().perf();
}

std::vector<ProfileSample> Agent::profile() const { return impl_->stats.samples(); }

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
  if (!valid_norms(n))
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
    // Non-finite norms (an overflowed fp16 step) or times carry nothing: the
    // record stays invalid rather than an error, the step counts no statistics.
    const auto seconds = [](double v) { return std::isfinite(v) && v > 0; };
    const bool ok = valid_norms(n) && (n.local_grads == 1 || n.local_grads == d.record_ctx.accum + 1) &&
                    previous->micro_steps > 0 && seconds(previous->grad_time_sum) && seconds(previous->step_time);
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

int Agent::out_of_memory(int micro_batch) { return impl_->out_of_memory(micro_batch); }

void Agent::set_sharded(bool sharded) {
  Impl& d = *impl_;
  if (d.sharded == sharded) return;
  d.sharded = sharded;
  if (!d.hints) return;
  d.hints->adapter().set_sharded(sharded);
  d.hints->refit_soon();
}

bool Agent::sharded() const noexcept { return impl_->sharded; }
int Agent::max_atomic() const noexcept { return impl_->opt.limits.max_atomic; }

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

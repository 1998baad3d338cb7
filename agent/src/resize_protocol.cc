// The job side of a resize (see resize_protocol.h).
#include "resize_protocol.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "log.h"
#include "pollux/agent_backend.h"
#include "pollux/resize_decision.h"
#include "pollux/spool_dir.h"

namespace pollux::agent_detail {

ResizeProtocol::ResizeProtocol(Communicator& comm, const AgentOptions& options, const JobEnvironment& env)
    : comm_(comm),
      opt_(options),
      rank_(comm.rank()),
      decision_path_(decision_path(options, env)),
      restart_count_(env.restart_count),
      signal_(options.resize_signal, decision_path_, env.restart_count),
      seen_signals_(ResizeSignal::handled()),
      seen_checkpoint_requests_(ResizeSignal::checkpoint_requests()) {}

// Where sched/pollux writes its resize decisions for this job; "" outside
// Slurm (every delivery of the signal is then a request).
std::string ResizeProtocol::decision_path(const AgentOptions& o, const JobEnvironment& e) {
  if (e.job_id == 0) return {};
  try {
    return resize_decision_path(o.spool_dir.empty() ? resolve_spool_dir() : o.spool_dir, e.job_id);
  } catch (const std::exception&) {
    return resize_decision_path(kDefaultSpoolDir, e.job_id);
  }
}

ResizeProtocol::Followup ResizeProtocol::followup(long long answered_ms, long long* new_ms) {
  std::string said;
  if (rank_ == 0 && !decision_path_.empty()) {
    char buf[128];
    std::FILE* f = std::fopen(decision_path_.c_str(), "re");
    const std::size_t n = f != nullptr ? std::fread(buf, 1, sizeof buf, f) : 0;
    if (f != nullptr) std::fclose(f);
    ResizeDecision d;
    if (n > 0 && parse_resize_decision(buf, n, &d) && d.restart_count == restart_count_ && d.time_ms > answered_ms)
      said = (d.cancel ? "c" : "r") + std::to_string(d.time_ms);
  }
  if (comm_.size() > 1) comm_.broadcast(said, 0);
  if (said.empty()) return Followup::kNone;
  if (new_ms != nullptr) *new_ms = std::atoll(said.c_str() + 1);
  return said[0] == 'c' ? Followup::kCancelled : Followup::kNewRequest;
}

bool ResizeProtocol::requested() {
  ResizeSignal::reclaim();  // behind a handler the program installed since
  return ResizeSignal::received() != seen_signals_;
}

bool ResizeProtocol::checkpoint_requested() {
  if (ResizeSignal::checkpoint_requests() == seen_checkpoint_requests_) return false;
  seen_checkpoint_requests_ = ResizeSignal::checkpoint_requests();
  return true;
}

bool ResizeProtocol::all_ranks_ready() {
  if (ready_) return false;
  ready_ = true;
  return true;
}

int ResizeProtocol::announced_signal() const {
  return signal_.listening() && ready_ && !closing_ ? opt_.resize_signal : 0;
}

// Every resize signal this process has received counts as answered.
void ResizeProtocol::mark_signals_handled() {
  seen_signals_ = ResizeSignal::received();
  ResizeSignal::set_handled(seen_signals_);
}

// The program's last word before Slurm's requeue ends the process: every
// rank's, before rank 0 acknowledges (the requeue follows the ack).
void ResizeProtocol::before_requeue() {
  try {
    if (requeue_fn) requeue_fn();
  } catch (const std::exception& e) {
    log(rank_, "the requeue callback failed (%s); the resize goes on", e.what());
  } catch (...) {
    log(rank_, "the requeue callback threw a non-standard exception; the resize goes on");
  }
  comm_.barrier();
}

StepAction ResizeProtocol::resize(long long step, CheckpointProtocol& checkpoints, HintPublisher* hints) {
  if (rank_ == 0 && opt_.verbose >= 1)
    log(rank_, "resize requested by the scheduler: checkpointing at step %lld", step);
  long long answered = ResizeSignal::last_request_ms();
  const std::string failure = checkpoints.take(step);
  // A signal that reached this rank after its synchronize() (another rank
  // had it before) or during the checkpoint is a late copy of the same
  // burst (slurmd delivers to the nodes a little apart): the checkpoint
  // answers it too; counting only the signals the packet carried would flag
  // a second resize at the next step. One that comes during the wait below
  // is a new request (sched/pollux may have cancelled this resize and
  // decided another): answered there when the decision file shows it, else
  // (no decision file: a resize driven by hand) acted on after the wait.
  mark_signals_handled();
  if (!failure.empty()) {
    if (rank_ == 0) log(rank_, "no checkpoint (%s), so no requeue acknowledgement; training goes on", failure.c_str());
    return StepAction::kContinue;
  }
  // Called off while the checkpoint was written: training goes on (the
  // checkpoint stays, an ordinary one). A newer request is answered by it.
  long long newer = 0;
  switch (followup(answered, &newer)) {
    case Followup::kCancelled:
      if (rank_ == 0 && opt_.verbose >= 1)
        log(rank_, "resize called off by the scheduler during the checkpoint of step %lld; training goes on", step);
      mark_signals_handled();
      return StepAction::kContinue;
    case Followup::kNewRequest:
      answered = newer;
      break;
    case Followup::kNone:
      break;
  }
  before_requeue();
  bool acked = true;
  if (hints != nullptr) {
    hints->checkpoint_committed(step, opt_.requeue_mode == RequeueMode::kWait);
    hints->publish(false, HintPublisher::Propose::kNo);
    // The acknowledgement is on disk before we wait, or we say why not.
    if (const std::string err = hints->adapter().flush(); !err.empty() && opt_.requeue_mode == RequeueMode::kWait) {
      acked = false;
      log(rank_, "checkpoint of step %lld committed, but its acknowledgement could not be written (%s): the "
          "scheduler requeues the job once its checkpoint timeout passes; waiting up to %g s", step, err.c_str(),
          opt_.requeue_wait);
    }
  }
  if (opt_.requeue_mode == RequeueMode::kExit) {
    if (rank_ == 0 && opt_.verbose >= 1)
      log(rank_, "exiting with code %d for Slurm to requeue the job (RequeueExit)", opt_.requeue_exit_code);
    return StepAction::kRequeueExit;
  }
  if (rank_ == 0 && acked && opt_.verbose >= 1)
    log(rank_, "checkpoint acknowledged in the hint; waiting up to %g s to be requeued", opt_.requeue_wait);
  // Slurm's requeue ends this process; if it does not come, or the
  // scheduler calls the resize off, resume. A newer request (the resize
  // called off, then another decided) is answered by the same checkpoint,
  // acknowledged again.
  using Clock = std::chrono::steady_clock;
  const auto wait = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt_.requeue_wait));
  Clock::time_point until = Clock::now() + wait;
  bool cancelled = false;
  while (!cancelled && Clock::now() < until) {
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(200), until - Clock::now()));
    switch (followup(answered, &newer)) {
      case Followup::kCancelled:
        cancelled = true;
        break;
      case Followup::kNewRequest:
        answered = newer;
        mark_signals_handled();
        until = Clock::now() + wait;
        if (hints != nullptr) {
          hints->checkpoint_committed(step, true);
          hints->publish(false, HintPublisher::Propose::kNo);
          const std::string err = hints->adapter().flush();
          if (opt_.verbose >= 1)
            log(rank_, "a new resize request during the wait: checkpoint of step %lld acknowledged again%s%s", step,
                err.empty() ? "" : " (not written: ", err.empty() ? "" : (err + ")").c_str());
        }
        break;
      case Followup::kNone:
        break;
    }
  }
  // Requests a cancel called off are answered; one without a decision file
  // (a resize driven by hand) during the wait is acted on after it.
  if (cancelled) mark_signals_handled();
  if (hints != nullptr) {
    if (cancelled)
      log(rank_, "resize called off by the scheduler: resuming at %d replica(s)", comm_.size());
    else
      log(rank_, "not requeued within %g s: resuming at %d replica(s)", opt_.requeue_wait, comm_.size());
    hints->requeue_withdrawn();
    hints->publish(false, HintPublisher::Propose::kNo);
    hints->adapter().flush();
  }
  comm_.barrier();
  return StepAction::kContinue;
}

}  // namespace pollux::agent_detail

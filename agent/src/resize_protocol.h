// The job side of a resize (doc/agent.md, "The resize protocol (job
// side)"). The scheduler's signal is noted at each step's sync and carried
// in the step packet, so that every rank acts at the same step boundary;
// there: a checkpoint, the application's requeue callback on every rank,
// the acknowledgement in rank 0's hint, then Slurm's requeue awaited (it
// ends the process; training resumes when it does not come) or the
// RequeueExit code returned. While it checkpoints and waits it reads
// sched/pollux's decision file: a cancel of the request resumes training at
// once (no acknowledgement, or the acknowledgement withdrawn); a newer
// request during the wait is acknowledged again with the same checkpoint.
// It also says when the hint announces the signal: once every rank's agent
// (and handler) exists, until the last hint.
#ifndef POLLUX_AGENT_RESIZE_PROTOCOL_H
#define POLLUX_AGENT_RESIZE_PROTOCOL_H

#include <string>

#include "checkpoint_protocol.h"
#include "hint_publisher.h"
#include "pollux/agent.h"
#include "resize_signal.h"

namespace pollux {
class Communicator;
}

namespace pollux::agent_detail {

class ResizeProtocol {
 public:
  /// Installs the signal handler (ResizeSignal) for this run. A signal
  /// that came before (during start-up) is acted on at the first step
  /// boundary.
  ResizeProtocol(Communicator& comm, const AgentOptions& options, const JobEnvironment& env);

  /// The program's last word before Slurm's requeue ends the process.
  RequeueFn requeue_fn;

  /// At a step's sync: whether this rank has received a resize request no
  /// checkpoint has answered yet (the handler is put back in front of one
  /// the program installed since, first).
  bool requested();
  /// Rank 0, at a step's sync: whether the signal came, since the last
  /// call, as a checkpoint request (to a program without a handler of its
  /// own: Slurm's --signal warning).
  bool checkpoint_requested();

  /// The first all-reduce had every rank's part: every rank's handler
  /// exists, so the hint may announce the signal. True the first time.
  bool all_ranks_ready();
  /// The last hint is being written: the signal is no longer announced.
  void stop_announcing() { closing_ = true; }
  /// The signal the hint announces (0: none).
  int announced_signal() const;

  /// The resize at the end of step `step` (collective). `hints`: rank 0's,
  /// null on the other ranks.
  StepAction resize(long long step, CheckpointProtocol& checkpoints, HintPublisher* hints);

 private:
  static std::string decision_path(const AgentOptions& options, const JobEnvironment& env);
  // What the decision file says after the request of time `answered_ms`
  // (rank 0 reads it, every rank gets its answer: collective).
  enum class Followup { kNone, kCancelled, kNewRequest };
  Followup followup(long long answered_ms, long long* new_ms);
  void mark_signals_handled();
  void before_requeue();

  Communicator& comm_;
  const AgentOptions& opt_;
  int rank_;
  std::string decision_path_;  // "" outside Slurm
  int restart_count_;
  ResizeSignal signal_;
  long seen_signals_ = 0;
  long seen_checkpoint_requests_ = 0;  // rank 0: non-resize deliveries answered by a checkpoint
  bool ready_ = false;    // every rank's agent exists: the resize signal is announced
  bool closing_ = false;  // the last hint: the agent stops listening
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_RESIZE_PROTOCOL_H

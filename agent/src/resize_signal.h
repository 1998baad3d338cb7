// The scheduler's resize signal: a handler that tells sched/pollux's
// resize requests from every other delivery of the same signal, counts the
// requests, and hands everything else to the handler the program had or
// installs later.
//
// sched/pollux writes its decision into the spool (pollux/resize_decision.h)
// before it signals; a delivery is a request when that file names this run
// and is fresh. The handler is installed (SA_RESTART, so that interrupted
// system calls are restarted) while an Agent lives, in front of the
// program's action for the signal: a non-request is passed on to that
// action (its handler; nothing when ignored; with the default action, it
// counts as a checkpoint request: what Slurm's --signal asks for). A
// program that installs its own handler later (sigaction, Python's
// signal.signal) is put behind the agent's again by reclaim(), which the
// agent calls at every step boundary (and the Python binding after every
// signal.signal). Without a decision file to read (not a Slurm job, no
// spool) every delivery is a request: there is no scheduler to tell it
// apart, and a person or a test drives the resize by hand.
#ifndef POLLUX_AGENT_RESIZE_SIGNAL_H
#define POLLUX_AGENT_RESIZE_SIGNAL_H

#include <signal.h>

#include <string>

namespace pollux::agent_detail {

class ResizeSignal {
 public:
  /// Installs the handler for `sig` (0: none) while the object lives, in
  /// front of the current action; `decision_path` ("" : none) is this
  /// job's decision file, `restart_count` this run's. Afterwards the
  /// program's action (the latest one reclaim() saw) is put back.
  ResizeSignal(int sig, const std::string& decision_path, int restart_count);
  ~ResizeSignal();
  ResizeSignal(const ResizeSignal&) = delete;
  ResizeSignal& operator=(const ResizeSignal&) = delete;

  /// Whether the handler is installed (the agent announces the signal in
  /// its hint only then).
  bool listening() const noexcept { return installed_; }

  /// When the program has replaced the handler since, installs it again in
  /// front of the program's new action. True when it did.
  static bool reclaim() noexcept;

  /// The decision time (Unix ms) of the last request received; -1: none.
  static long long last_request_ms() noexcept;
  /// Resize requests received so far by the process.
  static long received() noexcept;
  /// Requests some agent of this process has acted on.
  static long handled() noexcept;
  static void set_handled(long count) noexcept;
  /// Other deliveries that found only the default action behind the agent:
  /// checkpoint requests.
  static long checkpoint_requests() noexcept;

 private:
  int sig_;
  bool installed_ = false;
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_RESIZE_SIGNAL_H

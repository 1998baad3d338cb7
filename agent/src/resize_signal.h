// The scheduler's resize signal (SIGUSR1 by default): a handler that only
// counts, and the bookkeeping of which signals an agent has acted on.
//
// Linking libpollux-agent installs the handler when the library is loaded
// (for POLLUX_RESIZE_SIGNAL, default SIGUSR1, and only where the signal's
// action is still the default): a job requeued by sched/pollux may be
// signalled again while it is still starting, before its Agent exists, and
// SIGUSR1's default action would kill it. Such an early signal is not
// lost: the first agent acts on it at its first step boundary.
#ifndef POLLUX_AGENT_RESIZE_SIGNAL_H
#define POLLUX_AGENT_RESIZE_SIGNAL_H

#include <signal.h>

namespace pollux::agent_detail {

class ResizeSignal {
 public:
  /// Installs the counting handler for `sig` (0: none) while the object
  /// lives; the previous action is restored afterwards.
  explicit ResizeSignal(int sig);
  ~ResizeSignal();
  ResizeSignal(const ResizeSignal&) = delete;
  ResizeSignal& operator=(const ResizeSignal&) = delete;

  /// Signals received so far by the process (any resize signal).
  static long received() noexcept;
  /// Signals some agent of this process has acted on.
  static long handled() noexcept;
  static void set_handled(long count) noexcept;

 private:
  int sig_;
  bool installed_ = false;
  struct sigaction old_ {};
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_RESIZE_SIGNAL_H

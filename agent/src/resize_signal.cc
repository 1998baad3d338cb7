// The resize signal's handler (see resize_signal.h).
#include "resize_signal.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace pollux::agent_detail {
namespace {

std::atomic<long> g_received{0};
static_assert(std::atomic<long>::is_always_lock_free, "the signal handler needs a lock-free counter");
long g_handled = 0;  // the training thread's only

void on_signal(int) { g_received.fetch_add(1, std::memory_order_relaxed); }

bool install(int sig, struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  return ::sigaction(sig, &sa, old) == 0;
}

// At load time: POLLUX_RESIZE_SIGNAL's signal (the Agent validates the
// variable; here an unreadable value just means the default), if its
// action is still the default one.
struct EarlyHandler {
  EarlyHandler() {
    int sig = SIGUSR1;
    if (const char* v = std::getenv("POLLUX_RESIZE_SIGNAL")) {
      const char* name = std::strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
      if (std::strcmp(name, "USR2") == 0) sig = SIGUSR2;
      else if (std::strcmp(name, "URG") == 0) sig = SIGURG;
      else if (std::strcmp(name, "none") == 0 || std::strcmp(name, "0") == 0) sig = 0;
      else if (const int n = std::atoi(name); n > 0 && n < 65 && n != SIGKILL && n != SIGSTOP) sig = n;
    }
    struct sigaction current {};
    if (sig > 0 && ::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) install(sig, nullptr);
  }
} g_early;

}  // namespace

ResizeSignal::ResizeSignal(int sig) : sig_(sig) {
  if (sig_ > 0) installed_ = install(sig_, &old_);
}

ResizeSignal::~ResizeSignal() {
  if (installed_) ::sigaction(sig_, &old_, nullptr);
}

long ResizeSignal::received() noexcept { return g_received.load(std::memory_order_relaxed); }
long ResizeSignal::handled() noexcept { return g_handled; }
void ResizeSignal::set_handled(long count) noexcept { g_handled = count; }

}  // namespace pollux::agent_detail

// The resize signal's handler (see resize_signal.h).
#include "resize_signal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "pollux/resize_decision.h"

namespace pollux::agent_detail {
namespace {

// Everything the handler reads, set while the signal cannot reach it or
// published through an atomic index (the program's action).
std::atomic<long> g_received{0};
std::atomic<long> g_checkpoint_requests{0};
static_assert(std::atomic<long>::is_always_lock_free, "the signal handler needs lock-free counters");
long g_handled = 0;  // the training thread's only
std::atomic<int> g_sig{0};
char g_path[4096] = {};
int g_restart = 0;
uid_t g_spool_owner = 0;
std::atomic<long long> g_last_request{-1};
// The program's action, double-buffered: reclaim() writes the slot the
// handler does not read, then switches.
struct sigaction g_program[2] = {};
std::atomic<int> g_current{0};

void on_signal(int sig, siginfo_t* info, void* context);

bool is_ours(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) != 0 && a.sa_sigaction == on_signal;
}

bool install(int sig) {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  return ::sigaction(sig, &sa, nullptr) == 0;
}

long long now_ms() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

enum class Delivery { kRequest, kCopy, kOther };

// Async-signal-safe: open, read, fstat, close, clock_gettime.
Delivery classify() {
  if (g_path[0] == '\0') return Delivery::kRequest;
  const int fd = ::open(g_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Delivery::kOther;
  char buf[128];
  struct stat st {};
  const bool trusted = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == g_spool_owner || st.st_uid == 0);
  const ssize_t n = trusted ? ::read(fd, buf, sizeof buf) : -1;
  ::close(fd);
  ResizeDecision d;
  // (A cancel is never signalled: a delivery beside one is not sched/pollux's.)
  if (n <= 0 || !parse_resize_decision(buf, static_cast<std::size_t>(n), &d) || d.restart_count != g_restart ||
      d.cancel)
    return Delivery::kOther;
  const long long age = now_ms() - d.time_ms;
  if (age > kResizeDecisionFresh * 1000 || age < -kResizeDecisionFresh * 1000) return Delivery::kOther;
  // One decision, one request: a second delivery of it is a copy.
  return g_last_request.exchange(d.time_ms) == d.time_ms ? Delivery::kCopy : Delivery::kRequest;
}

void on_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  switch (classify()) {
    case Delivery::kRequest:
      g_received.fetch_add(1, std::memory_order_relaxed);
      break;
    case Delivery::kCopy:
      break;
    case Delivery::kOther: {
      const struct sigaction& p = g_program[g_current.load()];
      if ((p.sa_flags & SA_SIGINFO) != 0 && p.sa_sigaction != nullptr) {
        p.sa_sigaction(sig, info, context);
      } else if (p.sa_handler == SIG_DFL) {
        g_checkpoint_requests.fetch_add(1, std::memory_order_relaxed);
      } else if (p.sa_handler != SIG_IGN && p.sa_handler != nullptr) {
        p.sa_handler(sig);
      }
      break;
    }
  }
  errno = saved_errno;
}

// Saves `a` as the program's action.
void set_program(const struct sigaction& a) {
  const int next = 1 - g_current.load();
  g_program[next] = a;
  g_current.store(next);
}

}  // namespace

ResizeSignal::ResizeSignal(int sig, const std::string& decision_path, int restart_count) : sig_(sig) {
  if (sig_ <= 0 || g_sig.load() != 0) return;  // one listener per process
  struct sigaction current {};
  if (::sigaction(sig_, nullptr, &current) != 0) return;
  g_path[0] = '\0';
  if (!decision_path.empty() && decision_path.size() < sizeof g_path) {
    std::memcpy(g_path, decision_path.c_str(), decision_path.size() + 1);
    const std::string dir = decision_path.substr(0, decision_path.rfind('/') + 1);
    struct stat st {};
    g_spool_owner = ::stat(dir.c_str(), &st) == 0 ? st.st_uid : 0;
  }
  g_restart = restart_count;
  g_last_request.store(-1);
  if (!is_ours(current)) set_program(current);
  g_sig.store(sig_);
  installed_ = install(sig_);
  if (!installed_) g_sig.store(0);
}

ResizeSignal::~ResizeSignal() {
  if (!installed_) return;
  reclaim();  // the program's latest action is the one to put back
  ::sigaction(sig_, &g_program[g_current.load()], nullptr);
  g_sig.store(0);
}

bool ResizeSignal::reclaim() noexcept {
  const int sig = g_sig.load();
  struct sigaction current {};
  if (sig <= 0 || ::sigaction(sig, nullptr, &current) != 0 || is_ours(current)) return false;
  set_program(current);
  return install(sig);
}

long long ResizeSignal::last_request_ms() noexcept { return g_last_request.load(); }
long ResizeSignal::received() noexcept { return g_received.load(std::memory_order_relaxed); }
long ResizeSignal::handled() noexcept { return g_handled; }
void ResizeSignal::set_handled(long count) noexcept { g_handled = count; }
long ResizeSignal::checkpoint_requests() noexcept { return g_checkpoint_requests.load(std::memory_order_relaxed); }

}  // namespace pollux::agent_detail

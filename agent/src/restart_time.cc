// What a restart costs the job (see restart_time.h).
#include "restart_time.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "log.h"
#include "pollux/hint_fields.h"

namespace pollux::agent_detail {
namespace {

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

bool RestartTime::step_ended(int rank, int verbose) {
  if (first_step_done_) return false;
  first_step_done_ = true;
  if (rank != 0) return false;
  const double started = process_age().value_or(std::chrono::duration<double>(Clock::now() - created_).count());
  seconds_ = std::min(restored_save_seconds_ + started, hint_fields::kMaxRestartSeconds);
  if (verbose >= 1)
    log(rank, "restart time %.2f s (checkpoint save %.2f s, process start to the first step %.2f s)", seconds_,
        restored_save_seconds_, started);
  return true;
}

}  // namespace pollux::agent_detail

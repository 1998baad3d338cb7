// AgentOptions from POLLUX_* variables and JobEnvironment from Slurm's
// (see pollux/agent.h and doc/agent.md, "Environment").
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "pollux/agent.h"

namespace pollux {
namespace {

const char* get(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

[[noreturn]] void bad(const char* name, const char* value, const char* what) {
  throw std::invalid_argument(std::string(name) + "='" + value + "': " + what);
}

long long env_integer(const char* name, long long lo, long long hi, long long fallback) {
  const char* v = get(name);
  if (v == nullptr) return fallback;
  long long x = 0;
  const char* end = v + std::strlen(v);
  const auto r = std::from_chars(v, end, x);
  if (r.ec != std::errc() || r.ptr != end) bad(name, v, "not an integer");
  if (x < lo || x > hi)
    bad(name, v, ("out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]").c_str());
  return x;
}

double env_real(const char* name, double lo, double hi, double fallback) {
  const char* v = get(name);
  if (v == nullptr) return fallback;
  double x = 0;
  const char* end = v + std::strlen(v);
  const auto r = std::from_chars(v, end, x);
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(x)) bad(name, v, "not a finite number");
  if (x < lo || x > hi) {
    char range[64];
    std::snprintf(range, sizeof range, "out of range [%.15g, %.15g]", lo, hi);
    bad(name, v, range);
  }
  return x;
}

bool env_bool(const char* name, bool fallback) {
  const char* v = get(name);
  if (v == nullptr) return fallback;
  const std::string s = v;
  if (s == "1" || s == "yes" || s == "true") return true;
  if (s == "0" || s == "no" || s == "false") return false;
  bad(name, v, "expected 1/yes/true or 0/no/false");
}

int env_signal(const char* name, int fallback) {
  const char* v = get(name);
  if (v == nullptr) return fallback;
  std::string s = v;
  if (s.rfind("SIG", 0) == 0) s = s.substr(3);
  if (s == "USR1") return SIGUSR1;
  if (s == "USR2") return SIGUSR2;
  if (s == "URG") return SIGURG;
  if (s == "0" || s == "none") return 0;
  const long long n = env_integer(name, 1, 64, 0);
  if (n == SIGKILL || n == SIGSTOP) bad(name, v, "cannot be caught");
  return static_cast<int>(n);
}

}  // namespace

void AgentOptions::apply_environment() {
  limits.init_batch = env_real("POLLUX_INIT_BATCH", 1, 1e9, limits.init_batch);
  limits.max_batch = env_real("POLLUX_MAX_BATCH", 1, 1e9, limits.max_batch);
  limits.min_atomic = static_cast<int>(env_integer("POLLUX_MIN_ATOMIC", 1, 100000000, limits.min_atomic));
  limits.max_atomic = static_cast<int>(env_integer("POLLUX_MAX_ATOMIC", 1, 100000000, limits.max_atomic));
  limits.accumulation = env_bool("POLLUX_ACCUMULATION", limits.accumulation);
  adapt = env_bool("POLLUX_ADAPT", adapt);
  if (const char* v = get("POLLUX_SPOOL_DIR")) spool_dir = v;
  write_hints = env_bool("POLLUX_HINTS", write_hints);
  hint_interval = env_real("POLLUX_HINT_INTERVAL", 0, 86400, hint_interval);
  if (const char* v = get("POLLUX_CHECKPOINT_DIR")) checkpoint_dir = v;
  if (const char* v = get("POLLUX_REQUEUE_MODE")) {
    const std::string m = v;
    if (m == "wait") requeue_mode = RequeueMode::kWait;
    else if (m == "exit") requeue_mode = RequeueMode::kExit;
    else bad("POLLUX_REQUEUE_MODE", v, "expected 'wait' or 'exit'");
  }
  requeue_wait = env_real("POLLUX_REQUEUE_WAIT", 0, 86400 * 7, requeue_wait);
  checkpoint_interval = env_real("POLLUX_CHECKPOINT_INTERVAL", 0, 86400 * 365, checkpoint_interval);
  requeue_exit_code = static_cast<int>(env_integer("POLLUX_REQUEUE_EXIT_CODE", 1, 255, requeue_exit_code));
  resize_signal = env_signal("POLLUX_RESIZE_SIGNAL", resize_signal);
  verbose = static_cast<int>(env_integer("POLLUX_VERBOSE", 0, 3, verbose));
}

void AgentOptions::validate() const {
  if (!limits.valid())
    throw std::invalid_argument(
        "batch limits: need 0 < init_batch <= max_batch and 1 <= min_atomic <= max_atomic (got init_batch=" +
        std::to_string(limits.init_batch) + ", max_batch=" + std::to_string(limits.max_batch) +
        ", min_atomic=" + std::to_string(limits.min_atomic) + ", max_atomic=" + std::to_string(limits.max_atomic) + ")");
  if (!(smoothing > 0 && smoothing < 1)) throw std::invalid_argument("smoothing must be in (0, 1)");
  if (!(hint_interval >= 0) || !(refit_interval >= 0) || !(requeue_wait >= 0) || !(checkpoint_interval >= 0) ||
      !std::isfinite(checkpoint_interval))
    throw std::invalid_argument("hint_interval, refit_interval, requeue_wait and checkpoint_interval must be finite and >= 0");
  if (requeue_exit_code < 1 || requeue_exit_code > 255)
    throw std::invalid_argument("requeue_exit_code must be in [1, 255]");
  if (warmup_steps < 0 || min_profile_steps < 1)
    throw std::invalid_argument("warmup_steps must be >= 0 and min_profile_steps >= 1");
}

JobEnvironment JobEnvironment::from_environment() {
  JobEnvironment j;
  j.job_id = static_cast<std::uint32_t>(env_integer("SLURM_JOB_ID", 1, 4294967293LL, 0));
  j.restart_count = static_cast<int>(env_integer("SLURM_RESTART_COUNT", 0, 65535, 0));
  j.num_nodes = static_cast<int>(env_integer("SLURM_JOB_NUM_NODES", 1, INT_MAX, 0));
  j.ntasks = static_cast<int>(env_integer("SLURM_NTASKS", 1, INT_MAX, 0));
  j.procid = static_cast<int>(env_integer("SLURM_PROCID", 0, INT_MAX, -1));
  if (const char* v = get("SLURM_JOB_NODELIST")) j.nodelist = v;
  if (const char* v = get("SLURM_SUBMIT_DIR")) j.submit_dir = v;
  if (const char* v = get("SLURMD_NODENAME")) {
    j.node_name = v;
  } else {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) j.node_name = host;
  }
  j.uid = static_cast<std::uint32_t>(::getuid());
  return j;
}

}  // namespace pollux

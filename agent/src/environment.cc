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
#include "pollux/agent_c.h"  // the options list
#include "pollux/gpu_type.h"

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

// One option from its variable (the list's `read` column), left as it
// is when the variable is unset or empty.
void read_real(const char* name, double& v, double lo, double hi) { v = env_real(name, lo, hi, v); }
void read_integer(const char* name, int& v, long long lo, long long hi) {
  v = static_cast<int>(env_integer(name, lo, hi, v));
}
void read_boolean(const char* name, bool& v, int, int) { v = env_bool(name, v); }
void read_text(const char* name, std::string& v, int, int) {
  if (const char* s = get(name)) v = s;
}
void read_requeue_mode(const char* name, RequeueMode& v, int, int) {
  const char* s = get(name);
  if (s == nullptr) return;
  const std::string m = s;
  if (m == "wait") v = RequeueMode::kWait;
  else if (m == "exit") v = RequeueMode::kExit;
  else bad(name, s, "expected 'wait' or 'exit'");
}
void read_signal(const char* name, int& v, int, int) { v = env_signal(name, v); }
template <typename T>
void read_none(const char*, T&, int, int) {}  // an option without a variable

}  // namespace

void AgentOptions::apply_environment() {
#define POLLUX_FROM_ENV(type, name, member, env, read, lo, hi) read_##read(env, member, lo, hi);
  POLLUX_AGENT_OPTIONS_FIELDS(POLLUX_FROM_ENV)
#undef POLLUX_FROM_ENV
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

namespace {
// The environment variable of the option stored at `member` of `o`, as the
// options list names it ("": the option has none).
const char* variable_of(const AgentOptions& o, const void* member) {
#define POLLUX_VARIABLE_OF(type, name, m, env, read, lo, hi) \
  if (static_cast<const void*>(&o.m) == member) return env;
  POLLUX_AGENT_OPTIONS_FIELDS(POLLUX_VARIABLE_OF)
#undef POLLUX_VARIABLE_OF
  return "";
}
}  // namespace

std::string reported_gpu_type(const AgentOptions& o) {
  // The C API leaves a text option that it read from the environment NULL
  // (its strings are the caller's): the variable is read again here.
  std::string given = o.gpu_type;
  const std::string env = variable_of(o, &o.gpu_type);
  if (given.empty() && !env.empty()) read_text(env.c_str(), given, 0, 0);
  if (given.empty()) return normalize_gpu_type(o.device_name);
  std::string name = normalize_gpu_type(given);
  if (name.empty()) bad(("gpu_type (" + env + ")").c_str(), given.c_str(), "no letter or digit to name a GPU type");
  return name;
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
  if (const char* v = get("SLURM_CLUSTER_NAME")) j.cluster = v;
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

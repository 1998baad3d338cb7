// Locating the traces (see traces_location.h).
#include "traces_location.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "input_error.h"

namespace pollux::sim {
namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

std::string real(const std::string& p) {
  std::unique_ptr<char, decltype(&::free)> r(::realpath(p.c_str(), nullptr), &::free);
  return r ? std::string(r.get()) : p;
}

// True when some sub-directory of `dir` has a placements.csv.
bool has_application(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n[0] != '.' && exists(dir + "/" + n + "/placements.csv")) {
      found = true;
      break;
    }
  }
  ::closedir(d);
  return found;
}

}  // namespace

std::string default_traces_root() {
#if defined(POLLUX_SIM_BUILDDIR) && defined(POLLUX_SIM_SOURCE_TRACES)
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    std::string exe(buf, static_cast<std::size_t>(n));
    const std::string dir = exe.substr(0, exe.find_last_of('/'));
    // pollux-sim's build directory, or the replay's beside it (pollux-emulate).
    const std::string replay = std::string(POLLUX_SIM_BUILDDIR) + "/../replay";
    for (const std::string& b : {std::string(POLLUX_SIM_BUILDDIR), replay})
      if (real(dir) == real(b) || real(dir) == real(b + "/.libs")) return POLLUX_SIM_SOURCE_TRACES;
  }
#endif
#ifdef POLLUX_SIM_INSTALLED_TRACES
  return POLLUX_SIM_INSTALLED_TRACES;
#else
  return "traces";
#endif
}

std::string application_dir(const std::string& dir) {
  if (!is_dir(dir)) throw InputError(dir, 0, "traces directory not found (use --traces DIR)");
  if (is_dir(dir + "/traces") && has_application(dir + "/traces")) return dir + "/traces";
  if (has_application(dir)) return dir;
  throw InputError(dir, 0, "no application traces (<app>/placements.csv) here or under traces/");
}

std::string traces_root(const std::string& application_dir) {
  const std::string tail = "/traces";
  if (application_dir.size() > tail.size() &&
      application_dir.compare(application_dir.size() - tail.size(), tail.size(), tail) == 0)
    return application_dir.substr(0, application_dir.size() - tail.size());
  return application_dir;
}

std::string resolve_workload_arg(const std::string& arg, const std::string& root) {
  if (exists(arg) || arg.empty() || arg[0] == '/') return arg;
  const std::string there = root + "/" + arg;
  return exists(there) ? there : arg;
}

}  // namespace pollux::sim

// SPDX-License-Identifier: GPL-2.0-or-later
// The spool's free space (see spool_space.h).
#include "spool_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "pollux/hint.h"

namespace pollux::sched {

SpoolSpace spool_space(const std::string& dir) noexcept {
  SpoolSpace s;
  try {
    struct statvfs st {};
    if (::statvfs(dir.c_str(), &st) != 0) {
      s.error = std::strerror(errno);
      return s;
    }
    s.known = true;
    s.free_bytes = static_cast<unsigned long long>(st.f_bavail) * st.f_frsize;
    s.inodes_counted = st.f_files > 0;
    s.free_inodes = s.inodes_counted ? static_cast<unsigned long long>(st.f_favail) : 0;
    s.full = s.free_bytes < kHintMaxBytes || (s.inodes_counted && s.free_inodes < 2);
  } catch (...) {
    s.known = false;
    s.error = "out of memory";
  }
  return s;
}

std::string spool_space_change(const SpoolSpace& before, const SpoolSpace& now, const std::string& dir, bool* error) {
  if (error != nullptr) *error = false;
  if (now == before) return {};
  if (!now.known) {
    if (error != nullptr) *error = true;
    return "cannot examine the spool " + dir + " (statvfs: " + now.error + ")";
  }
  if (now.full) {
    if (error != nullptr) *error = true;
    return "the spool " + dir + " is full (" + std::to_string(now.free_bytes) + " bytes" +
           (now.inodes_counted ? ", " + std::to_string(now.free_inodes) + " inodes" : std::string()) +
           " free): agents cannot write their hints, and jobs without one run as moldable (cap=spool-full)";
  }
  if (before.full) return "the spool " + dir + " has room again: agents can write their hints";
  if (!before.known && !before.error.empty()) return "the spool " + dir + " can be examined again";
  return {};  // first seen, with room
}

}  // namespace pollux::sched

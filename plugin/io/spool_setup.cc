// SPDX-License-Identifier: GPL-2.0-or-later
// The spool's creation (see spool_setup.h).
#include "spool_setup.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace pollux::sched {

SpoolSetup prepare_spool(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return {true, "pollux_spool_dir=" + dir + " is not a directory: no job's hint can be read"};
    if ((st.st_mode & 01777) != 01777) {
      char mode[16];
      std::snprintf(mode, sizeof mode, "%o", static_cast<unsigned>(st.st_mode & 07777));
      return {false, dir + " is mode " + mode +
                         ", not 1777 (world-writable, sticky): jobs may be unable to write their hints, or able to "
                         "remove each other's"};
    }
    return {};
  }
  std::string path;
  for (std::size_t pos = 1; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) break;
  }
  if (::chmod(dir.c_str(), 01777) != 0) return {true, "cannot create the spool " + dir + ": " + std::strerror(errno)};
  return {false, "created the spool " + dir + " (mode 1777)"};
}

}  // namespace pollux::sched

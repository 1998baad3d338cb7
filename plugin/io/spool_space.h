// SPDX-License-Identifier: GPL-2.0-or-later
// Whether the agents can write their hints to the spool (pollux_spool_dir):
// a full file system (space or inodes) fails every hint write with "No
// space left on device" in the job's output alone, and the jobs then run
// as moldable ones. The round thread checks it each round (one statvfs)
// and tells the administrator: the log when it changes, pollux-status, the
// metrics, and cap=spool-full on the jobs it leaves without a hint.
// Without Slurm.
#ifndef POLLUX_SCHED_SPOOL_SPACE_H
#define POLLUX_SCHED_SPOOL_SPACE_H

#include <string>

namespace pollux::sched {

/// What statvfs() says about the spool's file system, as an unprivileged
/// agent sees it (f_bavail, f_favail).
struct SpoolSpace {
  bool known = false;  ///< statvfs() answered (else `error` says why)
  /// Less room than one hint of the largest size (pollux/hint.h:
  /// kHintMaxBytes), or fewer than two free inodes (a hint is written to a
  /// temporary file, then renamed): an agent's write may fail.
  bool full = false;
  unsigned long long free_bytes = 0;
  /// Free inodes; 0 with `inodes_counted` false on a file system that does
  /// not count them (its inodes never run out).
  unsigned long long free_inodes = 0;
  bool inodes_counted = false;
  std::string error;
  bool operator==(const SpoolSpace& o) const noexcept {
    return known == o.known && full == o.full && error == o.error;
  }
};

/// The spool's space now. Never throws.
SpoolSpace spool_space(const std::string& dir) noexcept;

/// The line for the log when the spool's state changed from `before` to
/// `now` (full, room again, or cannot be examined); empty when it did not
/// change (free space moving within the same state says nothing). `error`
/// is set for a line that reports a problem.
std::string spool_space_change(const SpoolSpace& before, const SpoolSpace& now, const std::string& dir,
                               bool* error = nullptr);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_SPOOL_SPACE_H

// SPDX-License-Identifier: GPL-2.0-or-later
// Making sure the spool (pollux_spool_dir) exists as the agents need it:
// world-writable and sticky, like /tmp (doc/hint-format.md), so that every
// job can write its hint and none can remove another's. Without Slurm: the
// round thread logs what it returns.
#ifndef POLLUX_SCHED_SPOOL_SETUP_H
#define POLLUX_SCHED_SPOOL_SETUP_H

#include <string>

namespace pollux::sched {

/// What prepare_spool() found or did, for the log: nothing (`message`
/// empty), something to note, or an error.
struct SpoolSetup {
  bool error = false;
  std::string message;
};

/// Creates `dir` (and its missing parents, mode 0755) with mode 1777 when
/// it does not exist; an existing one is left as it is, with a note when
/// it is not a directory (an error: no hint can be read) or not mode 1777.
SpoolSetup prepare_spool(const std::string& dir);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_SPOOL_SETUP_H

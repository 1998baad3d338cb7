// SPDX-License-Identifier: GPL-2.0-or-later
// What nodes' boots take under Slurm's power saving, learnt by watching
// the rounds' snapshots: from slurmctld's resume of a node (its
// boot_req_time, when ResumeProgram was started) to its registration (its
// slurmd's start, which registers at once; its last response when that
// time is not within the boot), per node. A node never seen booting is
// taken to boot as long as the slowest node of its GPU type seen so, else
// of the cluster; nothing is assumed before any boot was seen (the first
// boot is how it is learnt). A job placed on a node that must boot waits
// that long, and the round counts it in the job's restart cost (round.h:
// restart_cost).
//
// Kept across slurmctld restarts in <StateSaveLocation>/pollux_boot_times
// (written atomically after a round that learnt something or saw a boot
// begin or end; read when the round thread starts), one record a line:
//   pollux_boot_times 1
//   node <name> <seconds> <boots>     seconds: the mean of its boots
//   booting <name> <resume time>      a boot under way (Unix time)
// A boot under way when slurmctld stops is measured once it starts again:
// Slurm clears the node's resume time when it registers, which it may do
// before the first round of the restarted slurmctld. (A sched/pollux older
// than the booting lines refuses a file written during a boot, and learns
// the boot times afresh.)
// Reading it treats it as untrusted: anything else is refused with one
// line naming the file and line, and the learner starts empty.
#ifndef POLLUX_SCHED_BOOT_TIMES_H
#define POLLUX_SCHED_BOOT_TIMES_H

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "round.h"

namespace pollux::sched {

inline constexpr std::string_view kBootTimesName = "pollux_boot_times";

struct NodeBoots {
  double seconds = 0;  ///< the mean of its boots seen
  long long boots = 0;
};

class BootTimes {
 public:
  /// Watches `snap`: a node seen booting that is now on gives a measure (a
  /// line for the log); one seen booting that is now out of service (its
  /// resume failed: ResumeTimeout) gives a line too. Then sets each node's
  /// boot_wait. Never throws but std::bad_alloc.
  std::vector<std::string> observe(Snapshot& snap);

  /// Seconds a boot of `snap`'s node `node` is expected to take: its own
  /// boots' mean, else the slowest node of its GPU type, else of any type;
  /// 0 when no boot was seen.
  double expected(const Snapshot& snap, std::size_t node) const;

  /// Whether a node was booting in the last snapshot observed (the rounds
  /// then come each second, so that its registration is seen promptly).
  bool booting() const { return !booting_.empty(); }

  const std::map<std::string, NodeBoots>& learnt() const { return learnt_; }
  /// The nodes seen booting, each with its resume time.
  const std::map<std::string, double>& booting_nodes() const { return booting_; }
  void restore(std::map<std::string, NodeBoots> learnt) { learnt_ = std::move(learnt); }

  /// The file the learnt boot times are kept in ("": none, StateSaveLocation unset).
  void set_file(std::string path) { path_ = std::move(path); }
  /// Reads the file into the learner: empty, or a line for the log (a
  /// first start, without the file, says nothing). Never throws.
  std::string recall() noexcept;
  /// Writes the file if something was learnt since: empty, or a line for
  /// the log (each failure once). Never throws.
  std::string keep() noexcept;

 private:
  std::map<std::string, NodeBoots> learnt_;
  std::map<std::string, double> booting_;  ///< node -> its resume time, while seen booting
  bool changed_ = false;
  std::string path_;
  std::string write_error_;
};

/// Whether an elastic job runs (Slurm's CONFIGURING: it waits for the
/// boot) or was placed on a node not yet on: its resume and boot are then
/// to be watched each second, not at the periodic round only (a boot of a
/// few seconds falls between two of them, and is not learnt).
bool awaits_boot(const Snapshot& snap);

/// The file's text for `learnt` and the boots under way.
std::string format_boot_times(const std::map<std::string, NodeBoots>& learnt,
                              const std::map<std::string, double>& booting = {});

struct ParsedBootTimes {
  std::map<std::string, NodeBoots> learnt;
  std::map<std::string, double> booting;  ///< node -> its resume time
  std::string error;     ///< empty: parsed; else "<path>:<line>: <why>"
  bool missing = false;  ///< read_boot_times(): no such file (a first start)
};

/// The records in `text`, the file `path`'s bytes (`path` only names it).
ParsedBootTimes parse_boot_times(std::string_view text, const std::string& path);

/// Reads the file `path` (owned by slurmctld's user, at most 1 MiB). Never throws.
ParsedBootTimes read_boot_times(const std::string& path) noexcept;

/// Replaces the file `path` atomically: empty, or why it failed. Never throws.
std::string write_boot_times(const std::string& path, const std::map<std::string, NodeBoots>& learnt,
                             const std::map<std::string, double>& booting = {}) noexcept;

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_BOOT_TIMES_H

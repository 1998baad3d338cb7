// SPDX-License-Identifier: GPL-2.0-or-later
// Reading the elastic jobs' hint files from the spool each round, outside
// slurmctld's locks. The files are untrusted: read_hint_file() (spool
// library) checks owner, symlinks, size, every field and the version. A
// rejected hint is logged once per job and reason, and the job is then
// treated as having no model (linear speedup) until a valid hint appears.
#ifndef POLLUX_SCHED_HINTS_H
#define POLLUX_SCHED_HINTS_H

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "round.h"

namespace pollux::sched {

class HintReader {
 public:
  /// Receives one line per rejection, "JobId=<id>: <reason>".
  using Logger = std::function<void(const std::string&)>;
  explicit HintReader(Logger log) : log_(std::move(log)) {}

  /// One JobInput per job of the snapshot (jobs held by others get none).
  /// A file unchanged since the last round (same inode, size, mtime) is not
  /// read again. A file owned by another user than the job's is removed
  /// (after the rejection is logged), so that the job's agent can write
  /// its own. An entry lstat() cannot examine (ESTALE, EIO, ELOOP...) is
  /// neither judged nor removed: the job keeps its last valid hint, if any.
  /// A job whose hint has no restart_seconds (a run before its first step,
  /// or a rejected hint) keeps the last one any of its hints had.
  /// Every line logged goes through log_safe(): one line, at most 1 KiB.
  std::vector<JobInput> read(const Snapshot& snap, const std::string& spool_dir);

  /// Rejections logged since the last call (each once per job and reason,
  /// as logged), by kind: "unexaminable" (lstat failed), "owner" (another
  /// user's file), "earlier-job" (written before the job was submitted),
  /// "invalid" (read_hint_file() refused it). For round_stats.h.
  std::map<std::string, long long> take_rejections();

 private:
  struct Cached {
    ino_t ino = 0;
    off_t size = 0;
    std::int64_t mtime_ns = 0;
    JobInput input;
  };
  Logger log_;
  std::unordered_map<std::uint32_t, Cached> cache_;       // by job id: the last valid hint
  std::unordered_map<std::uint32_t, std::string> logged_;  // by job id: the last rejection logged
  std::unordered_map<std::uint32_t, double> restart_seconds_;  // by job id: the last restart time reported
  std::map<std::string, long long> rejections_;            // by kind, since take_rejections()
};

/// A hint written this long before its job was submitted (Unix seconds)
/// was left by an earlier job with the same id; the slack covers clock
/// differences between the compute nodes and slurmctld's host.
inline constexpr double kHintClockSlack = 300;

/// What sweep_spool() did.
struct SpoolSweep {
  int removed = 0;
  std::vector<std::string> errors;  ///< one line per file that could not be removed or read
};

/// Removes from the spool the hint files (`<id>.hint.yaml`) of jobs that
/// are not elastic jobs of `snap` and that nobody has written for `max_age`
/// seconds, and the temporary files of writers that died as long ago, so
/// that the spool does not grow without bound and a job that later reuses
/// an id never meets an earlier job's hint. Entries are examined without
/// following links; other names are left alone. Never throws.
SpoolSweep sweep_spool(const Snapshot& snap, const std::string& spool_dir, double max_age) noexcept;

/// The JobInput a valid hint gives: its model (if it has one), its
/// checkpoint acknowledgement (if it is ready to be requeued), the scale
/// it has been profiled at and what a restart costs it.
JobInput job_input(const Hint& hint);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_HINTS_H

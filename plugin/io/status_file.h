// SPDX-License-Identifier: GPL-2.0-or-later
// What sched/pollux publishes about its rounds (round_stats.h), written
// atomically after each round outside slurmctld's locks:
//   <StateSaveLocation>/pollux_status.json   read by pollux-status(1)
//   pollux_metrics_file=PATH                 Prometheus text format, for
//                                            node_exporter's textfile collector
// and the reset request pollux-status --reset leaves for the next round
// (<StateSaveLocation>/pollux_status.reset; only root and SlurmUser may,
// as with sdiag -r).
#ifndef POLLUX_SCHED_STATUS_FILE_H
#define POLLUX_SCHED_STATUS_FILE_H

#include <sys/types.h>

#include <string>
#include <string_view>

#include "round_stats.h"

namespace pollux::sched {

inline constexpr std::string_view kStatusFileName = "pollux_status.json";
inline constexpr std::string_view kResetRequestName = "pollux_status.reset";
/// The status file's format version (its "version" field).
inline constexpr int kStatusVersion = 1;

/// The status as JSON (doc/man/pollux-status.1): both spans of counters,
/// the GPUs by kind and one object per job.
std::string status_json(const RoundStats& stats, double now);

/// The counters since slurmctld started, the GPUs by kind and per-job
/// gauges (labels job_id, user, partition), in Prometheus's text format
/// (names in doc/man/sched_pollux.5).
std::string metrics_text(const RoundStats& stats);

/// True when `path` is a reset request left by root or `slurm_uid` (a
/// regular file, not followed if a link); removes it. A request by anyone
/// else is removed and refused, with a line in `*refused`. Never throws.
bool take_reset_request(const std::string& path, uid_t slurm_uid, std::string* refused) noexcept;

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_STATUS_FILE_H

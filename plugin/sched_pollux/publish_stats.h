// SPDX-License-Identifier: GPL-2.0-or-later
// After each round, outside slurmctld's locks but a configuration read
// lock to copy two settings: honours pollux-status --reset, writes the
// status file into StateSaveLocation and the metrics file
// (pollux_metrics_file), both atomically (plugin/io/status_file.h).
#ifndef POLLUX_SCHED_PUBLISH_STATS_H
#define POLLUX_SCHED_PUBLISH_STATS_H

#include <string>

#include "sched/params.h"
#include "io/round_stats.h"

namespace pollux::sched {

class StatsPublisher {
 public:
  /// Never throws; a failure is logged once until it changes.
  void publish(RoundStats& stats, const Params& params) noexcept;

 private:
  std::string last_error_;
};

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_PUBLISH_STATS_H

// SPDX-License-Identifier: GPL-2.0-or-later
// sched/pollux's administrator parameters: the pollux_* options of
// slurm.conf SchedulerParameters (Slurm's comma-separated Key=Value list),
// their defaults and ranges. Documented in doc/man/sched_pollux.5.
#ifndef POLLUX_SCHED_PARAMS_H
#define POLLUX_SCHED_PARAMS_H

#include <string>
#include <string_view>
#include <vector>

#include "pollux/policy.h"
#include "pollux/spool_dir.h"

namespace pollux::sched {

struct Params {
  double interval = 60.0;             ///< pollux_interval: seconds between rounds
  double fairness_p = -1.0;           ///< pollux_fairness: power-mean exponent p
  double restart_penalty = 30.0;      ///< pollux_restart_penalty: D, seconds a resize costs
  bool interference_avoidance = true; ///< pollux_interference_avoidance
  int max_nodes_per_job = 16;         ///< pollux_max_nodes
  std::string spool_dir = kDefaultSpoolDir;  ///< pollux_spool_dir
  double checkpoint_timeout = 120.0;  ///< pollux_checkpoint_timeout: seconds to wait for the agent
  long long search_budget = 0;        ///< pollux_search_budget: fitness evaluations, 0 = policy default
  bool backfill = true;               ///< pollux_backfill: Slurm's backfill for rigid jobs
  std::string metrics_file;           ///< pollux_metrics_file: Prometheus text file written each round ("": none)

  bool operator==(const Params& o) const noexcept;
  bool operator!=(const Params& o) const noexcept { return !(*this == o); }
};

/// The parsed parameters, and one message per option that was rejected
/// (its default is kept) or not recognised.
struct ParamsResult {
  Params params;
  std::vector<std::string> errors;  // refused options, each saying what was kept instead
  std::vector<std::string> notes;   // keys given more than once, each naming the one that holds
};

/// Reads the pollux_* options of a SchedulerParameters string; other
/// options (Slurm's own, e.g. bf_interval) are ignored. Keys compare
/// case-insensitively, as Slurm's do; of a key given twice the last valid
/// occurrence wins (a refused one keeps the earlier value), and a note says so. Never throws
/// except std::bad_alloc.
ParamsResult parse_params(std::string_view scheduler_parameters);

/// One line listing every parameter and its value, for the log.
std::string describe(const Params& params);

/// The policy options these parameters select (GPUs per node always
/// uniform, so that Slurm can grant every decision).
PolicyOptions policy_options(const Params& params);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_PARAMS_H

// SPDX-License-Identifier: GPL-2.0-or-later
// sched/pollux's administrator parameters: the pollux_* options of
// slurm.conf SchedulerParameters (Slurm's comma-separated Key=Value list),
// their defaults and ranges. Documented in doc/man/sched_pollux.5.
#ifndef POLLUX_SCHED_PARAMS_H
#define POLLUX_SCHED_PARAMS_H

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pollux/autoscale.h"
#include "pollux/policy.h"
#include "pollux/spool_dir.h"

namespace pollux::sched {

/// pollux_gpu_type_speeds: the administrator's relative speed of each
/// named GPU type (Slurm's GRES type names, compared ignoring case; a type
/// not named has speed 1), the seed of the per-type model (gpu_types.h).
using GpuTypeSpeeds = std::map<std::string, double>;
/// A type's speed lies in [kMinGpuTypeSpeed, kMaxGpuTypeSpeed]: no two
/// GPUs differ a million-fold, and the ratios' logarithms stay finite.
inline constexpr double kMinGpuTypeSpeed = 0.001;
inline constexpr double kMaxGpuTypeSpeed = 1000;

/// pollux_autoscale: whether sched/pollux sizes a power-saving cluster
/// (autoscale_round.h). kOff: Slurm's own power saving alone.
enum class AutoscaleMode { kOff, kGoodput };

/// The values of the pollux_* options. A default-constructed Params holds
/// every option's default (the table in params.cc: parameter_table()).
struct Params {
  Params();

  double interval{};                ///< pollux_interval: seconds between rounds
  double fairness_p{};              ///< pollux_fairness: power-mean exponent p
  double restart_penalty{};         ///< pollux_restart_penalty: D, seconds a resize costs
  bool interference_avoidance{};    ///< pollux_interference_avoidance
  int max_nodes_per_job{};          ///< pollux_max_nodes
  std::string spool_dir;            ///< pollux_spool_dir
  double checkpoint_timeout{};      ///< pollux_checkpoint_timeout: seconds to wait for the agent
  long long search_budget{};        ///< pollux_search_budget: fitness evaluations, 0 = policy default
  bool backfill{};                  ///< pollux_backfill: Slurm's backfill for rigid jobs
  /// pollux_resize_signals: the signals an agent may announce for its resize
  /// requests (bit n - 1: signal n), USR1 and USR2 by default.
  unsigned long long resize_signals{};
  std::string metrics_file;         ///< pollux_metrics_file: Prometheus text file written each round ("": none)
  GpuTypeSpeeds gpu_type_speeds;    ///< pollux_gpu_type_speeds: TYPE=SPEED:... (none: every type 1)
  AutoscaleMode autoscale{};        ///< pollux_autoscale: off|goodput
  UtilityBand utility_band;         ///< pollux_utility_band: MIN:MAX, 0 <= MIN < MAX <= 1

  bool operator==(const Params& o) const noexcept;
  bool operator!=(const Params& o) const noexcept { return !(*this == o); }
};

/// One pollux_* parameter: everything about it is this one row of
/// params.cc's table, so that parsing, range checks, describe(), the
/// comparisons and the defaults cannot disagree. A new parameter is a
/// Params field and one row.
struct ParameterRow {
  const char* name;          ///< the SchedulerParameters key
  const char* default_text;  ///< the default as an administrator writes it; nullptr: unset (an empty value)
  const char* description;   ///< what it sets (doc/man/sched_pollux.5 says more)
  /// A change of it is a change of the policy's options (policy_options()):
  /// the round thread builds a new policy, which forgets its search state.
  bool policy;
  /// Sets the field from an administrator's text: "" or why the text is
  /// refused (the field is then untouched).
  std::function<std::string(std::string_view value, Params& params)> parse;
  std::function<std::string(const Params& params)> format;  ///< the value as describe() shows it
  std::function<bool(const Params& a, const Params& b)> same;  ///< the field equal in both
};

/// Every pollux_* parameter, in the order describe() lists them.
const std::vector<ParameterRow>& parameter_table();

/// Whether `a` and `b` differ in a parameter the policy is built from
/// (the rows marked `policy`).
bool policy_changed(const Params& a, const Params& b);

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

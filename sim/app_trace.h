// The measured traces of one application (traces/<app>/ of the Pollux
// OSDI'21 artifact; format in the traces' README.md), read and checked.
// Any bad file, row or value is an InputError naming the file and line.
#ifndef POLLUX_SIM_APP_TRACE_H
#define POLLUX_SIM_APP_TRACE_H

#include <map>
#include <string>
#include <vector>

namespace pollux::sim {

/// The largest per-GPU batch size a trace row may give (local_bsz): the
/// simulator computes batch sizes as int, and a GPU count times this stays
/// far within it.
inline constexpr long long kMaxLocalBatch = 1 << 20;

/// Seconds per optimizer step without accumulation, and the part of it
/// spent synchronising gradients, at one per-GPU batch size.
struct StepSample {
  int nodes = 1;
  int replicas = 1;
  double local_bsz = 1;
  double step_time = 0;
  double sync_time = 0;
};

/// A row of placements.csv: a StepSample for one exact placement.
struct PlacementSample {
  std::string placement;  ///< per-node GPU counts as digits, e.g. "22"
  StepSample sample;
};

/// A row of validation-<B>.csv: one epoch of a training run at batch B.
struct EpochRecord {
  double progress = 0;   ///< cumulative scale-invariant progress at the end of the epoch
  double iteration = 0;  ///< cumulative optimizer steps
  double metric = 0;
  double grad_sqr = 0;   ///< |g|^2 measured during the epoch
  double grad_var = 0;   ///< tr(Sigma) at the initial batch size
};

struct AppTrace {
  std::string name;
  std::string dir;
  /// The measurement files read: placements.csv, or placements-<profile>.csv
  /// for one GPU type's profile (Sia's artifact names them so).
  std::string placements_file;
  std::vector<PlacementSample> placements;  ///< placements.csv, file order
  std::vector<StepSample> scalability;      ///< scalability.csv, file order
  std::map<long long, std::vector<EpochRecord>> validation;  ///< by total batch size B
};

/// Reads `<traces_dir>/<name>/`: placements.csv, scalability.csv (may be
/// absent or empty) and every validation-<B>.csv (at least one). A
/// non-empty `profile` reads placements-<profile>.csv and
/// scalability-<profile>.csv instead: one GPU type's step times in the
/// layout of Sia's artifact (sia-simulator/traces/<app>/), same columns.
AppTrace read_app_trace(const std::string& traces_dir, const std::string& name, const std::string& profile = "");

/// "placements.csv" or "placements-<profile>.csv" (and so for "scalability").
std::string profile_file(const std::string& base, const std::string& profile);

/// Where a trace file lives, for messages.
std::string trace_path(const std::string& traces_dir, const std::string& name, const std::string& file);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_APP_TRACE_H

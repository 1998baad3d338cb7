// Workload files: one job per row, `name,time,application,num_replicas,
// batch_size` (submit time in seconds; num_replicas and batch_size are the
// user's hand-tuned settings, used by the non-adaptive baselines).
#ifndef POLLUX_SIM_WORKLOAD_H
#define POLLUX_SIM_WORKLOAD_H

#include <string>
#include <vector>

namespace pollux::sim {

class AppCatalog;

struct WorkloadJob {
  std::string name;
  double submit_time = 0;
  std::string application;
  int num_replicas = 1;
  long long batch_size = 1;
  /// The job ends after this many epochs (a study's trial pruned at a
  /// rung, study.h); 0: the application's full length. Not in the files.
  int last_epoch = 0;
  int line = 0;  ///< in the workload file, for messages
  /// A job of a site's history whose application is unknown (sacct.h):
  /// no model, `application` empty; it runs `duration` seconds on
  /// num_replicas GPUs (any placement), rigid under every policy that
  /// takes it (check_runnable).
  bool recorded = false;
  double duration = 0;
  /// The job's own time limit (a history's Timelimit), which --policy
  /// backfill uses instead of deriving one: < 0 none given (a workload
  /// file: derived, time_limit.h); 0 unlimited (UNLIMITED: the policy
  /// plans a year, as Slurm's INFINITE); > 0 seconds.
  double time_limit = -1;
};

struct Workload {
  std::string name;  ///< file name without .csv, e.g. "workload-6"
  std::string path;
  std::vector<WorkloadJob> jobs;  ///< file order
};

/// Reads and checks a workload file: every row complete and numeric where
/// it should be, names unique, times >= 0, sizes >= 1, and every
/// application present in `catalog`. InputError "FILE:LINE: ..." otherwise.
Workload read_workload(const std::string& path, const AppCatalog& catalog);

/// Expands the command line's WORKLOAD arguments: a directory stands for
/// the *.csv files in it (sorted by name, workload-10 after workload-9);
/// a missing path is an InputError.
std::vector<std::string> expand_workload_paths(const std::vector<std::string>& args);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_WORKLOAD_H

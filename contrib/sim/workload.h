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
  int line = 0;  ///< in the workload file, for messages
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

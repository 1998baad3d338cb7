// A site's own job history as a workload: `sacct --parsable2 --allocations`
// output (doc/simulator.md, "A site's own history", gives the command).
//
// One row a job allocation; the header names the fields (any order, others
// ignored): JobID, JobName, Comment, Submit, Start, End, State, Timelimit,
// NNodes, ReqTRES, AllocTRES. A job's application is the Comment's
// `pollux-app=APP` (with `pollux-batch=N`, its total batch, default the
// application's initial batch; `pollux-epochs=N`, the epochs it trained,
// default all), else its JobName when that names an
// application of the traces; such a job runs on the application's model.
// Any other job runs at its recorded GPUs for its recorded End - Start
// (WorkloadJob::recorded). Rows that are no job's whole life are skipped
// and counted (SacctSummary); a malformed row, an impossible size, a bad
// time or a `pollux-app=` naming no application is an InputError naming
// the file and line.
#ifndef POLLUX_SIM_SACCT_H
#define POLLUX_SIM_SACCT_H

#include <string>

#include "workload.h"

namespace pollux::sim {

class AppCatalog;

/// What a history held besides the jobs it gives.
struct SacctSummary {
  int modelled = 0;     ///< jobs run on their application's model
  int recorded = 0;     ///< jobs of unknown application: recorded size and duration
  int steps = 0;        ///< step rows (JOBID.batch, JOBID.0 ...) skipped
  int not_started = 0;  ///< never started (Start Unknown/None): skipped
  int not_ended = 0;    ///< still pending or running (End Unknown): skipped
  int no_gpus = 0;      ///< no gres/gpu in AllocTRES or ReqTRES: skipped
};

/// Reads `path`. Every time is multiplied by `time_scale` (a replay's:
/// real seconds to simulated); submit times count from the first job's.
/// Loads the named applications into `catalog`.
Workload read_sacct(const std::string& path, AppCatalog& catalog, double time_scale, SacctSummary* summary);

/// "[D-]HH:MM:SS", "MM:SS" as sacct prints a Timelimit -> seconds;
/// UNLIMITED and Partition_Limit -> 0 (none); -1 for anything else.
double parse_slurm_duration(const std::string& text);

/// "YYYY-MM-DDTHH:MM:SS" (sacct's default, the local time) -> seconds
/// since the epoch; nullopt-like NaN for anything else.
double parse_slurm_time(const std::string& text);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_SACCT_H

// Time limits for rigid jobs (pollux-sim --policy backfill): the trace
// workloads carry none, so each job gets the limit a user would ask Slurm
// for after running it once: its runtime alone at the workload's GPU count
// and batch size, times a factor, rounded up as users round (doc/simulator.md).
#ifndef POLLUX_SIM_TIME_LIMIT_H
#define POLLUX_SIM_TIME_LIMIT_H

#include "application.h"

namespace pollux::sim {

/// The default factor over the runtime alone (pollux-sim --time-limit-factor).
inline constexpr double kDefaultTimeLimitFactor = 2.0;

/// Seconds from start to completion of a job alone on `replicas` GPUs
/// packed onto nodes of `gpus_per_node` (select/cons_tres' fewest nodes),
/// at the fixed total batch `batch`, stalled `start_delay` seconds at its
/// start and `slowdown` times slower than the traces (1: as traced), as
/// pollux-sim runs it.
double rigid_runtime(StepTimeCache& steps, int replicas, long long batch, int gpus_per_node, double start_delay,
                     double slowdown = 1.0);

/// `runtime` x `factor`, rounded up as users write limits: to 15 or 30
/// minutes, above that to whole hours. Seconds, a whole number of minutes
/// as Slurm's limits are.
double user_time_limit(double runtime, double factor);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_TIME_LIMIT_H

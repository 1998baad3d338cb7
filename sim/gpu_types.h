// A heterogeneous cluster for pollux-sim (--gpu-types FILE): one row per
// GPU type, in node order,
//
//   type,nodes,speed[,gpus_per_node][,profile][,APPLICATION...]
//
// `gpus_per_node` (optional, 0 or absent: --gpus-per-node) sizes the
// type's nodes; `profile` (optional) names the type's measured step times
// in Sia's artifact (placements-<profile>.csv), used with --sia-artifact.
// `speed` is what the scheduler is told of the type (TypeRatios' seed: the
// compute speed of one micro-step relative to the traces' GPUs, the T4 of
// the Pollux testbed); a column named after an application gives that
// application's true speed on the type (default: `speed`). A `speed` of
// `-` tells the scheduler nothing (seed 1, explored as sched/pollux
// explores a type pollux_gpu_type_speeds does not name; true speed 1
// where no profile or application column gives it). The simulated
// jobs run at the true speeds: T_grad = (step - sync) / speed, sync as
// traced. Bad input is an InputError naming the file and line.
#ifndef POLLUX_SIM_GPU_TYPES_H
#define POLLUX_SIM_GPU_TYPES_H

#include <string>
#include <vector>

#include "cluster_sim.h"

namespace pollux::sim {

std::vector<GpuType> read_gpu_types(const std::string& path);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_GPU_TYPES_H

// SPDX-License-Identifier: GPL-2.0-or-later
// A GPU count per node as update_job() takes it in tres_per_node, on every
// supported Slurm: 23.11 renamed the TRES prefix "gres:gpu:N" (what sbatch
// --gpus-per-node=N wrote before) to "gres/gpu:N", and rejects the old form
// ("Invalid Trackable RESource (TRES) specification"). Reading accepts both
// (sched/elastic.h: untyped_gpus_per_node).
#ifndef POLLUX_COMPAT_TRES_H
#define POLLUX_COMPAT_TRES_H

#include <string>

#include "slurm_api.h"

namespace pollux::sched {

inline std::string slurm_gpus_per_node_tres(int gpus) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
  return "gres/gpu:" + std::to_string(gpus);
#else
  return "gres:gpu:" + std::to_string(gpus);
#endif
}

}  // namespace pollux::sched

#endif  // POLLUX_COMPAT_TRES_H

// SPDX-License-Identifier: GPL-2.0-or-later
// The name squeue shows for a job state reason (e.g. "QOSMaxGRESPerJob"),
// on every supported Slurm: 24.05 moved job_reason_string() out of
// slurm_protocol_defs.h into job_state_reason.h as job_state_reason_string().
#ifndef POLLUX_COMPAT_REASON_H
#define POLLUX_COMPAT_REASON_H

#include "slurm_api.h"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
extern "C" {
#include "src/common/job_state_reason.h"
}
#endif

namespace pollux::sched {

inline const char* reason_name(uint32_t reason) {
  const auto r = static_cast<enum job_state_reason>(reason);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
  const char* name = job_state_reason_string(r);
#else
  const char* name = job_reason_string(r);
#endif
  return name != nullptr ? name : "?";
}

}  // namespace pollux::sched

#endif  // POLLUX_COMPAT_REASON_H

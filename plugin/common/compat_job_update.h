// SPDX-License-Identifier: GPL-2.0-or-later
// The job an update request (job_desc_msg_t, for update_job()) is for, on
// every supported Slurm: 25.11 removed job_desc_msg_t.job_id, update_job()
// looks the job up by step_id.job_id.
#ifndef POLLUX_COMPAT_JOB_UPDATE_H
#define POLLUX_COMPAT_JOB_UPDATE_H

#include "slurm_api.h"

namespace pollux::sched {

inline void set_update_job_id(job_desc_msg_t* desc, uint32_t job_id) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
  desc->step_id.job_id = job_id;
#else
  desc->job_id = job_id;
#endif
}

}  // namespace pollux::sched

#endif  // POLLUX_COMPAT_JOB_UPDATE_H

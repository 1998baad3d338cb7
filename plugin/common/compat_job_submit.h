// SPDX-License-Identifier: GPL-2.0-or-later
// job_submit plugins' job_modify() on every supported Slurm: 23.02 gave it
// a fourth argument, `char **err_msg`, the text sbatch/scontrol show the
// user ("error: ..."), as job_submit() always had. POLLUX_JOB_MODIFY_PARAMS
// is the parameter list; POLLUX_JOB_MODIFY_ERR_MSG names err_msg, or
// nullptr where Slurm passes none (22.05: the refusal is logged only).
//
// From 23.02 on slurmctld may run several submit hooks at once (submit
// RPCs hold the job lock for reading only); job_modify runs under update_job
// with the job write lock. job_submit/pollux keeps no state of its own: each
// hook reads slurm_conf and the request/record it is given (see
// job_submit_pollux.cc), so concurrent hooks share nothing mutable.
#ifndef POLLUX_COMPAT_JOB_SUBMIT_H
#define POLLUX_COMPAT_JOB_SUBMIT_H

#include "slurm_api.h"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define POLLUX_JOB_MODIFY_PARAMS job_desc_msg_t *desc, job_record_t *job, uint32_t submit_uid, char **err_msg
#define POLLUX_JOB_MODIFY_ERR_MSG err_msg
#else
#define POLLUX_JOB_MODIFY_PARAMS job_desc_msg_t *desc, job_record_t *job, uint32_t submit_uid
#define POLLUX_JOB_MODIFY_ERR_MSG static_cast<char**>(nullptr)
#endif

#endif  // POLLUX_COMPAT_JOB_SUBMIT_H

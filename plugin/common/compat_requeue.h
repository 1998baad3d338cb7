// SPDX-License-Identifier: GPL-2.0-or-later
// Requeueing a job as slurmctld itself (uid 0, no RPC to answer, not a
// preemption, no flags) on every supported Slurm: 25.11 replaced
// job_requeue(uid, job_id, msg, preempt, flags) by job_requeue_internal(uid,
// job_ptr, preempt, flags) (and job_requeue_external() for RPCs). Caller
// holds the job and node write locks.
#ifndef POLLUX_COMPAT_REQUEUE_H
#define POLLUX_COMPAT_REQUEUE_H

#include "slurm_api.h"

namespace pollux::sched {

inline int requeue_job(job_record_t* job) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
  return job_requeue_internal(0, job, false, 0);
#else
  return job_requeue(0, job->job_id, nullptr, false, 0);
#endif
}

}  // namespace pollux::sched

#endif  // POLLUX_COMPAT_REQUEUE_H

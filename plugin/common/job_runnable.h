// SPDX-License-Identifier: GPL-2.0-or-later
// What Slurm itself allows an elastic job, asked of slurmctld's own tests
// rather than re-implemented: whether it could start now at all, and
// whether a size sched/pollux set is one Slurm would start. Every Slurm
// function called here exists with the same signature in 22.05 .. 26.05.
#ifndef POLLUX_SCHED_JOB_RUNNABLE_H
#define POLLUX_SCHED_JOB_RUNNABLE_H

#include <string>

#include "slurm_api.h"

namespace pollux::sched {

/// Why Slurm would not start this pending job now at any size, as the
/// one-word `why` of its SystemComment: "dependency" (test_job_dependency():
/// some remain), "dependency-never" (one can never be satisfied),
/// "reservation" (job_test_resv_now(): its reservation is not active), or
/// "partition" (none of its partitions takes new jobs). Empty when none
/// applies. Slurm's main loop skips held jobs, so for the jobs sched/pollux
/// holds this is where their dependencies are brought up to date. Caller
/// holds the job write lock (test_job_dependency() updates the job's
/// dependency list, as slurmctld's main loop does) and the partition read lock.
std::string start_blocker(job_record_t* job);

/// Slurm's verdict on a pending job's current size, from
/// job_limits_check() (the test slurmctld's main loop makes before starting
/// a job: its partition's node, CPU, time and memory limits): empty when it
/// passes, else the reason as squeue names it (e.g. "PartitionNodeLimit").
/// Caller holds the job write lock (job_limits_check() recomputes some of the
/// job's per-node counts) and the partition read lock.
std::string limits_refusal(job_record_t* job);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_RUNNABLE_H

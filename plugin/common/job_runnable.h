// SPDX-License-Identifier: GPL-2.0-or-later
// What Slurm itself allows an elastic job, asked of slurmctld's own tests
// rather than re-implemented: whether it could start now at all, and
// whether a size sched/pollux set is one Slurm would start. Every Slurm
// function called here exists with the same signature in 22.05 .. 26.05.
#ifndef POLLUX_SCHED_JOB_RUNNABLE_H
#define POLLUX_SCHED_JOB_RUNNABLE_H

#include <string>
#include <vector>

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

/// The nodes Slurm lets the job use at all, by node index (node_record_t::index):
/// those of its partitions that take jobs, less --exclude, and with
/// --constraint only those with the features active (valid_feature_counts(),
/// slurmctld's own feature test). A node list the job was given (--nodelist,
/// or a size sched/pollux set) is not a constraint here. Caller holds the
/// job write lock (the feature test caches its node sets in the job's
/// feature list), the node and partition read locks.
std::vector<bool> usable_nodes(job_record_t* job);

/// The most nodes the job's partitions allow it (MaxNodes: the largest
/// over its partitions), 0 when there is no limit. Partition read lock.
int partition_max_nodes(const job_record_t* job);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_RUNNABLE_H

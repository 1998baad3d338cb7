// SPDX-License-Identifier: GPL-2.0-or-later
// What Slurm itself allows an elastic job, asked of slurmctld's own tests
// rather than re-implemented: whether it could start now at all, and
// whether a size sched/pollux set is one Slurm would start. Every Slurm
// function called here exists with the same signature in 22.05 .. 26.05.
#ifndef POLLUX_SCHED_JOB_RUNNABLE_H
#define POLLUX_SCHED_JOB_RUNNABLE_H

#include <ctime>
#include <string>
#include <vector>

#include "sched/elastic.h"
#include "sched/job_state.h"
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
Why start_blocker(job_record_t* job);

/// Slurm's verdict on a pending job's current size, from
/// job_limits_check() (the test slurmctld's main loop makes before starting
/// a job: its partition's node, CPU, time and memory limits): empty when it
/// passes, else the reason as squeue names it (e.g. "PartitionNodeLimit").
/// Caller holds the job write lock (job_limits_check() recomputes some of the
/// job's per-node counts) and the partition read lock.
std::string limits_refusal(job_record_t* job);

/// Slurm's verdict on the job at a size it does not have (n nodes, g GPUs
/// and tasks on each, as enact.cc sets it: job_size_fields.h):
/// job_limits_check() run on a copy of the job's record set to that size,
/// against each of its partitions; empty when some partition passes it,
/// else the first reason. Locks as limits_refusal().
std::string limits_refusal_at(job_record_t* job, const Size& size);

/// What Slurm lets an elastic job be given, before the policy chooses:
/// where it may run and the sizes Slurm's own tests pass.
struct JobBounds {
  /// By node index (node_record_t::index): the nodes of its partitions that
  /// take jobs, less --exclude, with --constraint only those with the
  /// features active (valid_feature_counts()), and only those its
  /// reservation gives it, or no active reservation keeps from it
  /// (job_test_resv(), select_nodes()'s own test). A node list the job was
  /// given (--nodelist, or a size sched/pollux set) is not a constraint here.
  std::vector<bool> usable;
  int min_nodes = 0;          ///< fewest nodes Slurm passes (0: no bound beyond the range)
  int max_nodes = 0;          ///< most nodes (0: no bound)
  int max_gpus_per_node = 0;  ///< most GPUs per node (0: no bound): MaxCPUsPerNode / CPUs per task
  int max_gpus = 0;           ///< most GPUs in all (0: no bound): QOS and association limits
  std::string no_size;        ///< Slurm passes no size in the range: why (squeue's reason)
};

/// The job's bounds within `range` (its elastic range), in one partition:
/// a job that names several runs in one of them, so its bounds (nodes
/// included) are those of the one it runs in, or else of the one that lets
/// it hold the most GPUs (the first named of equals). Node counts and GPUs
/// per node tested with limits_refusal_at() (partition MinNodes, MaxNodes,
/// MaxTime, CPU and memory limits: whatever job_limits_check() tests), and
/// each partition's MaxCPUsPerNode (select_nodes() enforces it per node).
/// The sizes passed form one box [min_nodes, max_nodes] x [1,
/// max_gpus_per_node] (Slurm's limits grow with the size), narrowed by the
/// job's QOS and association limits (job_acct_limits.h: max_nodes,
/// max_gpus). One place for every per-job bound.
/// Caller holds the job write lock (the feature and reservation tests
/// update the job), the node and partition read locks.
JobBounds job_bounds(job_record_t* job, int range_min_nodes, int range_max_nodes, int range_gpus_per_node,
                     time_t now);

/// What job_bounds() depends on besides the size: the job's partitions and
/// their limits, its reservation, QOS and account. A
/// size Slurm refused stays refused until this changes. Partition read lock.
std::string limits_key(const job_record_t* job);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_RUNNABLE_H

// SPDX-License-Identifier: GPL-2.0-or-later
// A size sched/pollux gives an elastic job (sched/elastic.h: n nodes with g
// GPUs on each, one task per GPU) as Slurm's job fields: the one place that
// turns a size into node, task, CPU, GPU and memory counts. What the update
// sets (sched_pollux/enact.cc) is what the limit tests test: the partition
// limits on a copy of the record (job_runnable.h) and the QOS and
// association limits on TRES counts (job_acct_limits.h). CPUs follow from
// --cpus-per-task, one task per GPU; memory as Slurm counts it when it
// selects nodes (job_get_tres_mem(): --mem per node, --mem-per-cpu per CPU,
// the partition's node memory when none is given). The GPU request's form
// is the Slurm version's (compat_tres.h). A size with a GPU type would be
// written here alone.
// Every Slurm function called here exists with the same signature in
// 22.05 .. 26.05.
#ifndef POLLUX_SCHED_JOB_SIZE_FIELDS_H
#define POLLUX_SCHED_JOB_SIZE_FIELDS_H

#include <cstdint>
#include <string>
#include <vector>

#include "sched/elastic.h"
#include "slurm_api.h"

namespace pollux::sched {

/// --cpus-per-task as Slurm applies it: not given (0 or NO_VAL16) is 1.
std::uint16_t cpus_per_task(std::uint16_t requested) noexcept;
/// A job's CPUs per task (1 without details).
std::uint16_t cpus_per_task(const job_record_t* job) noexcept;

/// A job's fields at a size.
struct SizeFields {
  std::uint32_t nodes = 0;           ///< min = max nodes
  std::uint32_t tasks = 0;           ///< one per GPU
  std::uint16_t tasks_per_node = 0;
  std::uint32_t cpus = 0;            ///< CPUs per task for each task
  std::uint16_t cpus_per_node = 0;
  std::string tres_per_node;         ///< the GPUs per node, as update_job() takes them
};

SizeFields size_fields(const job_record_t* job, const Size& size);

/// An update_job() request that gives the job the size: its node, task,
/// CPU and GPU fields (update_job() only ever raises the CPU counts it
/// derives from the tasks: a job that shrinks must be given them, or it can
/// never start again).
void set_size(job_desc_msg_t* desc, const SizeFields& f);

/// A copy of the job's details as update_job() leaves them at the size (the
/// fields job_limits_check() reads, the original CPU counts included).
void set_size(JobDetails* details, const SizeFields& f);

/// The TRES counts accounting tests (acct_policy_job_runnable_post_select())
/// for the job with `gpus` GPUs on `nodes` nodes, one task per GPU: `tres`
/// (the job's request, slurmctld_tres_cnt entries) with the node, CPU,
/// memory and gres/gpu counts replaced (`gpu_pos`: gres/gpu's index, -1
/// when accounting does not track it). The GPUs need not be the same on each
/// node: accounting bounds GPUs and nodes separately. Memory asked per GPU
/// (--mem-per-gpu) is counted at the GPUs per node the job has now (its
/// gres request). Caller holds the job lock.
void set_size_tres(std::vector<std::uint64_t>& tres, job_record_t* job, int nodes, int gpus, int gpu_pos);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_SIZE_FIELDS_H

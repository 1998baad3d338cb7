// SPDX-License-Identifier: GPL-2.0-or-later
// Whether an elastic job's smallest size could ever run, asked at
// submission as slurmctld asks a rigid job (select_nodes() at sbatch time
// refuses one whose nodes can never hold it, _build_node_list()). A held
// job is not asked by Slurm, so job_submit/pollux asks for it.
#ifndef POLLUX_SCHED_SUBMIT_FIT_H
#define POLLUX_SCHED_SUBMIT_FIT_H

#include <optional>
#include <string>

#include "slurm_api.h"

namespace pollux::sched {

/// Why Slurm would refuse the job at `min_nodes` nodes with one GPU and one
/// task each (its smallest size): rc is Slurm's error for it and message
/// its own text for the user.
struct SubmitRefusal {
  int rc = SLURM_SUCCESS;
  std::string message;
};

/// nullopt when some partition the job names (or the default one) has
/// `min_nodes` nodes with the CPUs (--cpus-per-task, --mincpus) and memory
/// (--mem, --mem-per-cpu) the smallest size needs on each; else Slurm's
/// refusal ("CPU count per node can not be satisfied", "Memory
/// specification can not be satisfied", or "Requested node configuration
/// is not available" when too few nodes fit). Partitions that do not exist
/// are left to Slurm's own refusal. Caller holds the node and partition
/// read locks (slurmctld holds them around job_submit()).
std::optional<SubmitRefusal> smallest_size_refusal(const job_desc_msg_t* desc, int min_nodes);

/// Whether slurmctld will refuse the job's partition itself, first of what
/// it checks after the job_submit plugins ran (_job_create():
/// _get_job_parts()): a name in its --partition list that no partition
/// has, or none named, no reservation to take one from and no default
/// partition. Such a job gets no word from job_submit/pollux, so that
/// Slurm's refusal ("invalid partition specified: NAME") reaches the user
/// alone. Caller holds the partition read lock.
bool slurm_refuses_partition(const job_desc_msg_t* desc);

/// Refusals slurmctld makes itself after the job_submit plugins ran
/// (_job_create()), whose words a plugin's user message would replace at
/// sbatch (slurmctld answers a failed submission with the plugin's
/// err_msg when there is one): a --constraint naming a feature no node
/// has ("Invalid feature specification", build_feature_list()), and
/// `min_nodes` above the node count of every partition the job names
/// ("Node count specification invalid", _valid_job_part()). nullopt when
/// neither applies. Caller holds the node and partition read locks.
std::optional<SubmitRefusal> slurm_create_refusal(const job_desc_msg_t* desc, int min_nodes);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_SUBMIT_FIT_H

// SPDX-License-Identifier: GPL-2.0-or-later
// A size as Slurm's job fields (see job_size_fields.h).
#include "job_size_fields.h"

#include "compat_tres.h"

namespace pollux::sched {

std::uint16_t cpus_per_task(std::uint16_t requested) noexcept {
  return requested == 0 || requested == NO_VAL16 ? 1 : requested;
}

std::uint16_t cpus_per_task(const job_record_t* job) noexcept {
  return job->details != nullptr ? cpus_per_task(job->details->cpus_per_task) : 1;
}

SizeFields size_fields(const job_record_t* job, const Size& size) {
  const std::uint32_t cpt = cpus_per_task(job);
  const auto n = static_cast<std::uint32_t>(size.nodes), g = static_cast<std::uint32_t>(size.gpus_per_node);
  SizeFields f;
  f.nodes = n;
  f.tasks = n * g;
  f.tasks_per_node = static_cast<std::uint16_t>(g);
  f.cpus = f.tasks * cpt;
  f.cpus_per_node = static_cast<std::uint16_t>(g * cpt);
  f.tres_per_node = slurm_gpus_per_node_tres(size.gpus_per_node);
  return f;
}

void set_size(job_desc_msg_t* desc, const SizeFields& f) {
  desc->min_nodes = desc->max_nodes = f.nodes;
  desc->num_tasks = f.tasks;
  desc->ntasks_per_node = f.tasks_per_node;
  desc->min_cpus = f.cpus;
  desc->pn_min_cpus = f.cpus_per_node;
  xfree(desc->tres_per_node);
  desc->tres_per_node = xstrdup(f.tres_per_node.c_str());
}

void set_size(JobDetails* details, const SizeFields& f) {
  details->min_nodes = details->max_nodes = f.nodes;
  details->num_tasks = f.tasks;
  details->ntasks_per_node = f.tasks_per_node;
  details->min_cpus = details->orig_min_cpus = f.cpus;
  details->pn_min_cpus = details->orig_pn_min_cpus = f.cpus_per_node;
}

void set_size_tres(std::vector<std::uint64_t>& tres, job_record_t* job, int nodes, int gpus, int gpu_pos) {
  const auto n = static_cast<std::uint32_t>(nodes), tasks = static_cast<std::uint32_t>(gpus);
  const std::uint32_t cpus = tasks * cpus_per_task(job);
  tres[TRES_ARRAY_NODE] = n;
  tres[TRES_ARRAY_CPU] = cpus;
  if (job->details != nullptr)  // as select_nodes() counts it for this test
    tres[TRES_ARRAY_MEM] = job_get_tres_mem(nullptr, job->details->pn_min_memory, cpus, n, job->part_ptr,
                                            job->gres_list_req, (job->bit_flags & JOB_MEM_SET) != 0,
                                            job_get_sockets_per_node(job), tasks);
  if (gpu_pos >= 0 && static_cast<std::size_t>(gpu_pos) < tres.size())
    tres[static_cast<std::size_t>(gpu_pos)] = static_cast<std::uint64_t>(gpus);
}

}  // namespace pollux::sched

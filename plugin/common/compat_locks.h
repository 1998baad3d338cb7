// SPDX-License-Identifier: GPL-2.0-or-later
// slurmctld's lock set on every supported Slurm. 26.05 added a sixth lock,
// `select_node`: it guards node_select_stats_array (the select plugin's
// per-node alloc_cpus/alloc_memory/alloc_tres_fmt_str), which only
// select_g_select_nodeinfo_set_all() and its readers (node info RPCs,
// statistics, the backfill agent) touch. None of the calls sched/pollux
// makes (find_job_record, next_node, the job list, update_job, job_signal,
// job_requeue_internal, schedule_job_save, queue_job_scheduler) reads or
// writes it (checked in the 26.05 sources: doc/plugin.md), so the plugin
// takes it for neither its read nor its write phase; the backfill agent
// compiled in takes it itself.
#ifndef POLLUX_COMPAT_LOCKS_H
#define POLLUX_COMPAT_LOCKS_H

#include "slurm_api.h"

namespace pollux::sched {

/// {conf, job, node, part, fed}, with select_node NO_LOCK where it exists.
inline slurmctld_lock_t slurmctld_locks(lock_level_t conf, lock_level_t job, lock_level_t node, lock_level_t part,
                                        lock_level_t fed) {
  slurmctld_lock_t l{};  // every other lock (26.05: select_node) NO_LOCK
  l.conf = conf;
  l.job = job;
  l.node = node;
  l.part = part;
  l.fed = fed;
  return l;
}

}  // namespace pollux::sched

#endif  // POLLUX_COMPAT_LOCKS_H

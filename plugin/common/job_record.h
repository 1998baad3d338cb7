// SPDX-License-Identifier: GPL-2.0-or-later
// The parts of slurmctld's job records and requests that the Pollux
// plugins classify by or own. Callers hold the job lock (read to look,
// write to change).
#ifndef POLLUX_SCHED_JOB_RECORD_H
#define POLLUX_SCHED_JOB_RECORD_H

#include <cstdint>
#include <optional>
#include <string>

#include "sched/elastic.h"
#include "sched/job_comment.h"
#include "slurm_api.h"
#include "slurm_raii.h"

namespace pollux::sched {

/// A submission request's shape; `requeue` falls back to JobRequeue.
JobShape shape_of(const job_desc_msg_t* desc);
/// A job record's shape.
JobShape shape_of(const job_record_t* job);

/// sched/pollux's state in the job's SystemComment, if any (`problem`:
/// parse_comment()'s note on a word it does not know).
std::optional<JobState> pollux_state(const job_record_t* job, std::string* problem = nullptr);

/// Pending and held by Pollux: by job_submit/pollux at submission (no state
/// yet, elastic shape) or by sched/pollux (an administrator's hold whose
/// reason text starts with "pollux"). An administrator's own hold on such a
/// job clears that text (job_submit/pollux's job_modify), so it is not Pollux's.
bool held_by_pollux(const job_record_t* job);

/// A requeued batch job that Slurm left half-requeued: pending, done
/// completing, yet still holding its last run's node bitmap, resources and
/// GRES. Slurm 22.05 finishes a requeue (batch_requeue_fini()) when the
/// job's last node reports its epilog; when that node is set DOWN instead,
/// cleanup_completing() ends the completing phase without it, and a job
/// started so is allocated over the stale records: its GPUs are then never
/// freed on those nodes and the job waits for them forever.
bool requeue_unfinished(const job_record_t* job);

/// An elastic job sched/pollux has not seen yet: held at submission by
/// job_submit/pollux (or submitted with -H: sched/pollux decides when an
/// elastic job starts).
bool new_elastic_job(const job_record_t* job);

/// Holds a pending job the way sched/pollux does: priority 0 (an
/// administrator's hold, which users cannot release) and `reason` as the
/// text `squeue`/`scontrol` show. Caller holds the job write lock.
void set_pollux_hold(job_record_t* job, const char* reason);

/// GPUs a job holds on each node: fn(node index, GPUs) per node.
template <typename Fn>
void for_each_gpu_share(const job_record_t* job, Fn&& fn);

/// Sets NAME=VALUE in the job's supplemental environment, which Slurm lays
/// over the environment saved at submission each time the batch script
/// starts (get_job_env()): how a resized job's script sees its new size
/// in variables sbatch set from the submission's options.
void set_job_env(job_record_t* job, const std::string& name, const std::string& value);

/// Replaces a char* field of a record with an xstrdup'ed copy of `text`.
void set_string(char** field, const std::string& text);

/// alloc_node of the job updates sched/pollux makes itself (update_job()
/// replaces it with the sender's host for every update that comes by RPC),
/// so that job_submit/pollux's job_modify lets them through.
inline constexpr const char* kInternalUpdate = "sched/pollux";

// ---------------------------------------------------------------------------

template <typename Fn>
void for_each_gpu_share(const job_record_t* job, Fn&& fn) {
  if (job->gres_list_alloc == nullptr || job->node_bitmap == nullptr) return;
  ListIteratorGuard it(job->gres_list_alloc);
  while (auto* state = it.next<gres_state_t>()) {
    if (state->gres_name == nullptr || xstrcmp(state->gres_name, "gpu") != 0 || state->gres_data == nullptr)
      continue;
    const auto* js = static_cast<const gres_job_state_t*>(state->gres_data);
    if (js->gres_cnt_node_alloc == nullptr) continue;
    std::uint32_t k = 0;  // the job's k-th node
    const int last = bit_fls(job->node_bitmap);
    for (int n = bit_ffs(job->node_bitmap); n >= 0 && n <= last && k < js->node_cnt; ++n) {
      if (!bit_test(job->node_bitmap, n)) continue;
      if (js->gres_cnt_node_alloc[k] > 0) fn(n, static_cast<int>(js->gres_cnt_node_alloc[k]));
      ++k;
    }
  }
}

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_RECORD_H

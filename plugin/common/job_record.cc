// SPDX-License-Identifier: GPL-2.0-or-later
// Job records and requests (see job_record.h).
#include "job_record.h"

#include <cstring>

namespace pollux::sched {
namespace {

std::string text(const char* s) { return s != nullptr ? s : ""; }

}  // namespace

JobShape shape_of(const job_desc_msg_t* d) {
  JobShape s;
  s.batch = d->script != nullptr;
  s.requeue = d->requeue == NO_VAL16 ? slurm_conf.job_requeue != 0 : d->requeue != 0;
  s.array = d->array_inx != nullptr;
  s.heterogeneous = d->het_job_offset != NO_VAL;
  s.min_nodes = d->min_nodes;
  s.max_nodes = d->max_nodes;
  s.tres_per_node = text(d->tres_per_node);
  s.tres_per_job = text(d->tres_per_job);
  s.tres_per_socket = text(d->tres_per_socket);
  s.tres_per_task = text(d->tres_per_task);
  s.node_list = d->req_nodes != nullptr && d->req_nodes[0] != '\0';
  s.exclusive = d->shared == JOB_SHARED_NONE;
  return s;
}

JobShape shape_of(const job_record_t* j) {
  JobShape s;
  s.batch = j->batch_flag != 0;
  s.requeue = j->details != nullptr && j->details->requeue != 0;
  s.array = j->array_recs != nullptr || j->array_task_id != NO_VAL;
  s.heterogeneous = j->het_job_id != 0 && j->het_job_id != NO_VAL;
  if (j->details != nullptr) {
    s.min_nodes = j->details->min_nodes;
    s.max_nodes = j->details->max_nodes;
  }
  s.tres_per_node = text(j->tres_per_node);
  s.tres_per_job = text(j->tres_per_job);
  s.tres_per_socket = text(j->tres_per_socket);
  s.tres_per_task = text(j->tres_per_task);
  if (j->details != nullptr) {
    // sched/pollux sets the nodes of every size it gives: only a job it has
    // not sized yet shows the user's own.
    s.node_list = j->details->req_nodes != nullptr && j->details->req_nodes[0] != '\0' && !pollux_state(j);
    s.exclusive = (j->details->whole_node & WHOLE_NODE_REQUIRED) != 0;
  }
  return s;
}

std::optional<JobState> pollux_state(const job_record_t* job, std::string* problem) {
  if (job->system_comment == nullptr) return std::nullopt;
  return parse_comment(job->system_comment, problem);
}

bool new_elastic_job(const job_record_t* job) {
  // job_submit/pollux's hold shows as a user hold: Slurm marks every hold
  // placed at submission so (job_mgr.c, _job_create).
  return IS_JOB_PENDING(job) && job->priority == 0 &&
         (job->state_reason == WAIT_HELD_USER || job->state_reason == WAIT_HELD) &&
         job->state_desc == nullptr && !pollux_state(job) && classify(shape_of(job));
}

bool held_by_pollux(const job_record_t* job) {
  if (!IS_JOB_PENDING(job) || job->priority != 0) return false;
  // Slurm holds a job it finds it can never run (Reason=BadConstraints):
  // for an elastic job that is a size sched/pollux set, and will set again.
  if (job->state_reason == FAIL_BAD_CONSTRAINTS) return pollux_state(job).has_value();
  if (job->state_reason == WAIT_HELD && job->state_desc != nullptr)
    return std::strncmp(job->state_desc, kHoldPrefix, std::strlen(kHoldPrefix)) == 0;
  return new_elastic_job(job);
}

bool requeue_unfinished(const job_record_t* job) {
  return IS_JOB_PENDING(job) && !IS_JOB_COMPLETING(job) && job->batch_flag != 0 && job->restart_cnt > 0 &&
         job->node_bitmap != nullptr;
}

void set_pollux_hold(job_record_t* job, const char* reason) {
  job->priority = 0;
  job->state_reason = WAIT_HELD;
  set_string(&job->state_desc, reason);
}

void set_job_env(job_record_t* job, const std::string& name, const std::string& value) {
  auto* d = job->details;
  if (d == nullptr) return;
  const std::string prefix = name + "=";
  const std::string entry = prefix + value;
  for (uint32_t i = 0; i < d->env_cnt; ++i) {
    if (d->env_sup[i] != nullptr && std::strncmp(d->env_sup[i], prefix.c_str(), prefix.size()) == 0) {
      set_string(&d->env_sup[i], entry);
      return;
    }
  }
  xrecalloc(d->env_sup, d->env_cnt + 2, sizeof(char*));
  d->env_sup[d->env_cnt++] = xstrdup(entry.c_str());
}

void set_string(char** field, const std::string& value) {
  xfree(*field);
  *field = xstrdup(value.c_str());
}

}  // namespace pollux::sched

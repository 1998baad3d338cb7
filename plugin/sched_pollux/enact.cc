// SPDX-License-Identifier: GPL-2.0-or-later
// Enactment (see enact.h).
#include "enact.h"

#include <csignal>
#include <algorithm>
#include <cmath>

#include "common/compat_job_update.h"
#include "common/compat_requeue.h"
#include "common/job_record.h"
#include "common/job_runnable.h"
#include "common/job_size_fields.h"
#include "sched/elastic.h"
#include "sched/job_transitions.h"

namespace pollux::sched {
namespace {

// sched/pollux parks a job it requeues (kRequeueParking, round.h), so
// that Slurm never starts it before a light round has seen the requeue
// finish; the round then sets the real begin time (early_begin). A job
// requeued by anyone else (a node failure, scontrol, the job itself) keeps
// Slurm's own wait (now + the credential lifetime + 1), which lets its
// nodes finish with the last run (a step restarted while its predecessor's
// slurmstepd still cleans up fails to launch: its PMIx socket is in use,
// and srun 22.05 then exits 0).

// The begin time of a job sched/pollux requeued and parked, once Slurm has
// finished the requeue (its old steps, which sched/pollux knows are gone,
// no longer hold it back).
// A job preempted (requeued without GPUs, held) is unparked likewise: its
// hold keeps it, and squeue --start would show the parking as its start.
std::optional<double> early_begin(const ElasticJobSnapshot& j, const JobState& s, double now) {
  if (j.running || j.completing || j.requeue_unfinished || j.restarts == 0 ||
      (s.phase != Phase::kStarting && s.phase != Phase::kHeld) || !parked_by_pollux(j, now))
    return std::nullopt;
  return std::max(s.since + kRequeueGap, now + 1);
}

// update_job() for a size (job_size_fields.h), its nodes, and a release
// when the job is held.
int set_size(job_record_t* job, const Alloc& alloc, bool release, long long minutes = 0) {
  auto* desc = static_cast<job_desc_msg_t*>(xmalloc(sizeof(job_desc_msg_t)));
  slurm_init_job_desc_msg(desc);
  set_update_job_id(desc, job->job_id);
  desc->alloc_node = xstrdup(kInternalUpdate);
  set_size(desc, size_fields(job, alloc.size()));
  desc->req_nodes = xstrdup(alloc.node_list.c_str());
  if (release) desc->priority = INFINITE;
  // Slurm counts a time limit per run: this run gets what is left.
  if (minutes > 0) desc->time_limit = static_cast<uint32_t>(std::min<long long>(minutes, INFINITE - 1));
  slurm_msg_t msg;
  slurm_msg_t_init(&msg);
  msg.msg_type = REQUEST_UPDATE_JOB;
  msg.protocol_version = SLURM_PROTOCOL_VERSION;
  msg.data = desc;
  const int rc = update_job(&msg, 0, false);
  slurm_free_job_desc_msg(desc);
  if (rc == SLURM_SUCCESS) {
    // sbatch put the submitted sizes into the job's environment, where srun
    // would take them as its own options: lay the new ones over them.
    const std::string g = std::to_string(alloc.gpus_per_node);
    set_job_env(job, "SLURM_GPUS_PER_NODE", g);
    set_job_env(job, "SLURM_NTASKS_PER_NODE", g);
  }
  return rc;
}

std::string describe(const job_record_t* job, const char* what, int rc) {
  return "JobId=" + std::to_string(job->job_id) + ": " + what + " failed: " + slurm_strerror(rc);
}

// After a size was set: Slurm's own limits test, which its main loop makes
// before it starts the job (the bounds the policy was given come from the
// same test: this is the safety net). A size it refuses is undone at once:
// the job is held without GPUs, the round thread remembers the size
// (never proposed again), and the arrivals round a second later decides again.
bool refused(job_record_t* job, const JobDecision& d, EnactReport& r, std::string& comment) {
  // Against each partition the job names: Slurm starts it in any one that passes it.
  const std::string reason = limits_refusal_at(job, d.state.alloc.size());
  if (reason.empty()) return false;
  set_pollux_hold(job, hold_reason_for(Why::kRefused, reason).c_str());
  JobState st = d.state;
  hold(st, Why::kRefused, d.state.since);  // its `since` stays: the release set it this round
  comment = format_comment(JobView{}, st);
  r.refusals.push_back({job->job_id, reason, "JobId=" + std::to_string(job->job_id) + ": Slurm refuses " +
                                           std::to_string(d.state.alloc.nodes) + "x" +
                                           std::to_string(d.state.alloc.gpus_per_node) + " GPUs on " +
                                           d.state.alloc.node_list + ": " + reason +
                                           "; held without GPUs, and never given this size again until its "
                                           "partition, limits or range change",
                        d.state.alloc.size()});
  return true;
}

// A job sched/pollux requeued, promised GPUs, and parked until the
// requeue finishes: squeue --start would show the parking (an hour
// ahead). Its start as far as sched/pollux can tell (requeue_start; Slurm
// shows a pending job's StartTime before its begin time).
std::optional<time_t> parked_start(const ElasticJobSnapshot& j, const JobState& s, double now) {
  const auto t = requeue_start(j, s, Action::kNone, now);
  if (!t) return std::nullopt;
  return static_cast<time_t>(std::ceil(*t));
}

}  // namespace

bool needs_enact(const Snapshot& snap, const RoundResult& round) {
  if (!snap.ended.empty()) return true;
  for (const JobDecision& d : round.decisions) {
    const ElasticJobSnapshot& j = snap.jobs[d.job];
    if (d.action != Action::kNone || d.comment != j.system_comment || early_begin(j, d.state, snap.now) ||
        d.expected_end > 0 || j.requeue_unfinished || parked_start(j, d.state, snap.now))
      return true;
  }
  return false;
}

EnactReport enact(const Snapshot& snap, const RoundResult& round) {
  EnactReport r;
  const auto now = static_cast<time_t>(snap.now);
  for (const JobDecision& d : round.decisions) {
    const ElasticJobSnapshot& j = snap.jobs[d.job];
    job_record_t* job = find_job_record(j.job_id);
    if (job == nullptr || job->restart_cnt != j.restarts ||
        !(j.suspended ? IS_JOB_SUSPENDED(job) : j.running ? IS_JOB_RUNNING(job) : IS_JOB_PENDING(job))) {
      ++r.skipped;
      continue;
    }
    if (requeue_unfinished(job)) {
      // What Slurm does when the job's last node reports its epilog; its
      // node went DOWN instead (see requeue_unfinished()).
      info("sched/pollux: JobId=%u: the node its requeue waited for went DOWN and Slurm left the requeue "
           "unfinished: finishing it before the job starts again", job->job_id);
      batch_requeue_fini(job);
      ++r.requeues_finished;
    }
    int rc = SLURM_SUCCESS;
    std::string comment = d.comment;
    switch (d.action) {
      case Action::kNone:
        break;
      case Action::kHold:
        set_pollux_hold(job, d.hold_reason.empty() ? hold_reason_for(Why::kWait).c_str() : d.hold_reason.c_str());
        ++r.held;
        break;
      case Action::kRelease:
        rc = set_size(job, d.state.alloc, job->priority == 0, next_run_limit(d.state));
        if (rc != SLURM_SUCCESS) r.errors.push_back(describe(job, "setting its size", rc));
        else if (!refused(job, d, r, comment)) ++r.released;
        break;
      case Action::kSignal:
        // The signal its agent announced; its decision file is written (resize_request.h).
        rc = job_signal(job, static_cast<uint16_t>(d.signal), 0, 0, false);
        if (rc != SLURM_SUCCESS) r.errors.push_back(describe(job, "its resize signal to its steps", rc));
        else ++r.signalled;
        break;
      case Action::kRequeue:
        rc = requeue_job(job);
        if (rc != SLURM_SUCCESS) {
          r.errors.push_back(describe(job, "requeue", rc));
          break;
        }
        ++r.requeued;
        if (d.state.alloc.empty()) {
          set_pollux_hold(job, hold_reason_for(Why::kWait).c_str());
        } else if ((rc = set_size(job, d.state.alloc, false, next_run_limit(d.state))) != SLURM_SUCCESS) {
          r.errors.push_back(describe(job, "setting its size after the requeue", rc));
          set_pollux_hold(job, hold_reason_for(Why::kWait).c_str());  // never restart at the old size
        } else {
          refused(job, d, r, comment);
        }
        if (job->details != nullptr) job->details->begin_time = now + static_cast<time_t>(kRequeueParking);
        if (auto start = requeue_start(j, d.state, d.action, snap.now)) job->start_time = static_cast<time_t>(std::ceil(*start));
        break;
    }
    if (rc != SLURM_SUCCESS) continue;  // the comment keeps the previous state: retried next round
    // No time limit: Slurm does not enforce EndTime, and its backfill plans with it.
    // (A year or more is Slurm's stand-in for none: made INFINITE, so that
    // Slurm never times the job out by this EndTime.)
    if (j.running && d.expected_end > 0 && (job->time_limit == INFINITE || job->time_limit >= YEAR_MINUTES)) {
      job->time_limit = INFINITE;
      job->end_time = static_cast<time_t>(d.expected_end);
    }
    // Slurm's limit is in whole minutes and per run: the run ends when the
    // job's whole-life limit does, to the second.
    if (j.running && d.state.limit > 0 && job->start_time > 0) {
      const time_t end = job->start_time + static_cast<time_t>(d.state.limit * 60 - d.state.used);
      if (job->end_time > end) job->end_time = std::max(end, now);
    }
    if (auto start = parked_start(j, d.state, snap.now)) job->start_time = *start;
    if (auto begin = early_begin(j, d.state, snap.now); begin && job->details != nullptr) {
      job->details->begin_time = static_cast<time_t>(std::ceil(*begin));
      ++r.restarted_early;
    }
    if (comment != j.system_comment) {
      set_string(&job->system_comment, comment);
      ++r.comments;
    }
  }
  for (const EndedJob& e : snap.ended) {
    job_record_t* job = find_job_record(e.job_id);
    if (job == nullptr || !IS_JOB_FINISHED(job)) continue;
    set_string(&job->system_comment, e.comment);
    ++r.comments;
  }
  if (r.changed()) last_job_update = now;
  return r;
}

}  // namespace pollux::sched

// SPDX-License-Identifier: GPL-2.0-or-later
// State transitions (see job_transitions.h).
#include "job_transitions.h"

#include <algorithm>

namespace pollux::sched {
namespace {

void enter(JobState& s, Phase phase, double now) {
  if (s.phase != phase) s.since = now;
  s.phase = phase;
  s.from = {};  // only a checkpointing job runs somewhere other than `alloc`
}

}  // namespace

JobState adopted_state(const ElasticRange& range, double since, double submit, Why why) {
  JobState s;
  s.range = range;
  s.phase = Phase::kHeld;
  s.since = since;
  s.submit = submit;
  s.why = why;
  return s;
}

void hold(JobState& s, Why why, double now) {
  enter(s, Phase::kHeld, now);
  s.alloc = {};
  s.why = why;
}

void release(JobState& s, const Alloc& alloc, double now) {
  if (s.phase == Phase::kHeld) s.why = Why::kStart;
  s.phase = Phase::kStarting;
  s.since = now;
  s.alloc = alloc;
  s.from = {};
}

void run_at(JobState& s, const Alloc& current, double now) {
  enter(s, Phase::kRunning, now);
  s.alloc = current;
}

void signal_resize(JobState& s, const Alloc& current, const Alloc& to, Why resize, double now) {
  s.phase = Phase::kCheckpointing;
  s.since = now;
  retarget_resize(s, current, to, resize);
}

void retarget_resize(JobState& s, const Alloc& current, const Alloc& to, Why resize) {
  s.from = current;
  s.alloc = to;
  s.why = resize;
}

void cancel_resize(JobState& s, const Alloc& current, double now) {
  run_at(s, current, now);
  s.why = Why::kCancel;
}

void requeue(JobState& s, double run_start, double now) {
  if (s.limit > 0) s.used += static_cast<long long>(std::max(0.0, now - run_start));
  s.run = 0;
  s.phase = s.alloc.empty() ? Phase::kHeld : Phase::kStarting;
  s.since = now;
  s.from = {};
}

void unsignalled(JobState& s, const JobState& before, const Alloc& current, double now) {
  s.phase = Phase::kRunning;
  s.from = {};
  s.alloc = current;
  s.since = before.phase == Phase::kRunning ? before.since : now;
  s.why = before.why;
}

void suspend(JobState& s, const Alloc& current, double now) {
  enter(s, Phase::kSuspended, now);
  s.alloc = current;
}

void end(JobState& s, Why how, double end_time) {
  s.phase = Phase::kEnded;
  s.from = {};
  s.alloc = {};
  s.why = how;
  if (end_time > 0) s.since = end_time;
  // The last run counts in the time used (job_comment.h: run=).
  if (s.limit > 0 && s.run > 0 && end_time > s.run) s.used += static_cast<long long>(end_time - s.run);
  s.run = 0;
}

}  // namespace pollux::sched

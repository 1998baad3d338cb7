// SPDX-License-Identifier: GPL-2.0-or-later
// The transitions of an elastic job's state (job_comment.h: JobState), one
// function each, so that a phase, its `since`, the job's size and its
// reason always change together. Which transition a round takes is
// plan_round's decision (round.h); these only carry it out.
//
//   (new) --adopted--> held --release--> start --(Slurm starts it)--> run
//   run --signal_resize--> ckpt --requeue--> start | held
//   ckpt --cancel_resize--> run        any pending --hold--> held
//   run | ckpt --suspend--> suspended --(resumed: run_at)--> run
//   any --end--> end
#ifndef POLLUX_SCHED_JOB_TRANSITIONS_H
#define POLLUX_SCHED_JOB_TRANSITIONS_H

#include "elastic.h"
#include "job_comment.h"

namespace pollux::sched {

/// A job sched/pollux has not decided yet: held without GPUs since
/// `since`, submitted at `submit`, for `why`.
JobState adopted_state(const ElasticRange& range, double since, double submit, Why why);

/// Pending without GPUs for `why` (waiting for them, or a reason it cannot
/// start); `since` moves to `now` when it was not held.
void hold(JobState& s, Why why, double now);

/// Pending, released at `alloc` for Slurm to start it there: a promise from
/// `now` (why=start when it was held).
void release(JobState& s, const Alloc& alloc, double now);

/// Running at `current` (Slurm's allocation); `since` moves to `now` when
/// it was not running. The reason stays.
void run_at(JobState& s, const Alloc& current, double now);

/// Running at `current`, signalled at `now` to checkpoint for a move to `to`
/// (empty: no GPUs); `resize` says which (grow, shrink, move, preempt).
void signal_resize(JobState& s, const Alloc& current, const Alloc& to, Why resize, double now);

/// Checkpointing at `current`: the move it waits for is now to `to`, for
/// `resize` (`since`, the signal's time, stays).
void retarget_resize(JobState& s, const Alloc& current, const Alloc& to, Why resize);

/// Checkpointing, and the move is no longer wanted: running on at
/// `current` (why=cancel).
void cancel_resize(JobState& s, const Alloc& current, double now);

/// Checkpointing, requeued at `now` towards its decided size (start, or held
/// when that is no GPUs); with a time limit, the run that started at
/// `run_start` counts as used.
void requeue(JobState& s, double run_start, double now);

/// A resize signal that could not be sent: the job runs on at `current` as
/// it did before this round (`before`: its state then).
void unsignalled(JobState& s, const JobState& before, const Alloc& current, double now);

/// Suspended (scontrol suspend) on `current`, which Slurm keeps for it;
/// `since` moves to `now` when it was not suspended. A checkpoint for a
/// resize under way is called off (the decided move is forgotten); the
/// reason stays.
void suspend(JobState& s, const Alloc& current, double now);

/// Ended at `end_time` (0: unknown, `since` stays) for `how` (completed,
/// cancelled, timeout, ...): no GPUs; with a time limit, its last run counts.
void end(JobState& s, Why how, double end_time);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_TRANSITIONS_H

// SPDX-License-Identifier: GPL-2.0-or-later
// sched/pollux's thread: a full round (policy included) every
// pollux_interval seconds, and while resizes are in flight a light round
// every second that only moves them on (checkpoint acknowledged -> requeue
// at the new size; requeued job cleaned up -> eligible at once). One
// thread: a round that overruns the interval delays the next one, never
// queues behind it.
#ifndef POLLUX_SCHED_ROUND_THREAD_H
#define POLLUX_SCHED_ROUND_THREAD_H

namespace pollux::sched {

/// Starts the thread (and Slurm's backfill thread when pollux_backfill=yes).
/// Called from init() with slurmctld's configuration locked: takes no lock.
void start_rounds();
/// Stops both threads and waits for them.
void stop_rounds();
/// Re-reads SchedulerParameters before the next round (scontrol reconfigure).
void reconfigure_rounds();

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_ROUND_THREAD_H

// SPDX-License-Identifier: GPL-2.0-or-later
// The resize request's decision file: written into the spool for every job
// a round signals, before the signal (outside slurmctld's locks), so that
// the job's agent can tell the request from any other delivery of the same
// signal (pollux/resize_decision.h, doc/agent.md); and a cancel for every
// job whose signalled resize a round calls off, so that its agent, which
// may have checkpointed and be waiting for the requeue, trains on at once.
#ifndef POLLUX_SCHED_RESIZE_REQUEST_H
#define POLLUX_SCHED_RESIZE_REQUEST_H

#include <string>

#include "round.h"

namespace pollux::sched {

/// Writes the decision file of each kSignal decision (time `now_ms`, Unix
/// milliseconds). A job whose file cannot be written is not signalled:
/// its decision becomes "keep running" this round (decided again at the
/// next one), with a note saying why. A job that was checkpointing for a
/// resize and now runs on where it is (why=cancel) gets a cancel; one that
/// cannot be written is noted (its agent resumes after its requeue wait).
/// Never throws but std::bad_alloc.
void write_resize_requests(const Snapshot& snap, RoundResult& round, const std::string& spool_dir, long long now_ms);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_RESIZE_REQUEST_H

// SPDX-License-Identifier: GPL-2.0-or-later
// Resize decision files (see resize_request.h).
#include "resize_request.h"

#include "job_transitions.h"
#include "pollux/resize_decision.h"

namespace pollux::sched {

void write_resize_requests(const Snapshot& snap, RoundResult& round, const std::string& spool_dir, long long now_ms) {
  for (JobDecision& d : round.decisions) {
    const ElasticJobSnapshot& j = snap.jobs[d.job];
    if (j.state && j.state->phase == Phase::kCheckpointing && d.state.phase == Phase::kRunning &&
        d.state.why == Why::kCancel) {
      const std::string err = write_resize_decision(spool_dir, j.job_id, ResizeDecision{j.restarts, now_ms, true});
      if (!err.empty()) d.note = "its resize called off, but its agent not told (" + err + "): it trains on after its requeue wait";
      continue;
    }
    if (d.action != Action::kSignal) continue;
    const std::string err = write_resize_decision(spool_dir, j.job_id, ResizeDecision{j.restarts, now_ms});
    if (err.empty()) continue;
    // Unsignalled, the job keeps running as it was.
    d.action = Action::kNone;
    d.signal = 0;
    const JobState before = j.state.value_or(d.state);
    unsignalled(d.state, before, to_alloc(j.current, snap.nodes), snap.now);
    d.comment = format_comment(d.view, d.state);
    d.note = "not signalled for its resize: " + err + "; decided again next round";
  }
}

}  // namespace pollux::sched

// SPDX-License-Identifier: GPL-2.0-or-later
// Applying a round's decisions to slurmctld's job records (under its write
// locks): holds, releases at a size, checkpoint signals, requeues, and the
// SystemComment of every elastic job.
#ifndef POLLUX_SCHED_ENACT_H
#define POLLUX_SCHED_ENACT_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sched/round.h"

namespace pollux::sched {

struct EnactReport {
  int held = 0, released = 0, signalled = 0, requeued = 0, comments = 0, restarted_early = 0;
  int requeues_finished = 0;  ///< requeues Slurm left unfinished (requeue_unfinished()), finished here
  int skipped = 0;  ///< the job changed since the snapshot (ended, started, requeued by others)
  std::vector<std::string> errors;
  /// Sizes Slurm refused right after they were set (job_limits_check()):
  /// "JobId=N: ..." with the size and Slurm's reason; each such job is held
  /// again without GPUs (SystemComment why=refused) instead of waiting for
  /// a start that cannot come.
  struct Refusal {
    std::uint32_t job = 0;
    std::string reason;   ///< Slurm's, as squeue names it
    std::string message;  ///< for the log
    Size size;            ///< the size refused
  };
  std::vector<Refusal> refusals;
  bool changed() const noexcept {
    return held + released + signalled + requeued + comments + restarted_early + requeues_finished > 0;
  }
};

/// True when enact() would change anything (so the write locks can be skipped).
bool needs_enact(const Snapshot& snap, const RoundResult& round);

/// Applies the decisions. Caller holds the config read, job and node write,
/// partition and federation read locks.
EnactReport enact(const Snapshot& snap, const RoundResult& round);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_ENACT_H

// SPDX-License-Identifier: GPL-2.0-or-later
// When a job's end frees GPUs, the periodic round is brought forward: the
// policy sizes every job at once (survivors grow into the freed GPUs), not
// only the jobs without GPUs as an arrivals round does. A job is still
// resized only as the restart rule allows (the policy weighs each job's
// restart against what it gains, and a job's run that a restart began
// counts from that restart: describe_elastic_job), so bringing a round
// forward adds no resize the next periodic round would not make.
#ifndef POLLUX_SCHED_FREED_GPUS_H
#define POLLUX_SCHED_FREED_GPUS_H

#include <cstdint>
#include <vector>

#include "round.h"

namespace pollux::sched {

/// GPUs that rigid jobs hold (running, suspended, completing) on the
/// snapshot's nodes.
int rigid_gpus_held(const Snapshot& snapshot);

/// Tells, round after round, whether a job's end freed GPUs since the last
/// round: an elastic job that held GPUs ended (in snapshot.ended, and not
/// already at the last round: its SystemComment may not have been brought
/// up to date) or rigid jobs hold fewer GPUs than at the last round. The
/// first round compares rigid jobs with nothing.
class FreedGpus {
 public:
  /// Whether GPUs were freed since the last call; remembers this round.
  bool seen(const Snapshot& snapshot);

 private:
  int rigid_held_ = -1;                ///< at the last round (-1: none yet)
  std::vector<std::uint32_t> ended_;   ///< snapshot.ended's jobs at the last round, sorted
};

}  // namespace pollux::sched

#endif

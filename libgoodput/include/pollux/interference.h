// Interference avoidance (PolicyOptions::interference_avoidance: at most
// one distributed job per node) across a round that sizes only some jobs.
// sched/pollux's arrivals round, and pollux-sim's copy of it, ask the
// policy to place the jobs that hold no GPUs in the GPUs the others leave:
// the policy sees free GPUs, not which of the others run on several nodes,
// so it may put a second distributed job beside one.
#ifndef POLLUX_INTERFERENCE_H
#define POLLUX_INTERFERENCE_H

#include <vector>

#include "pollux/policy.h"

namespace pollux {

/// Clears every multi-node placement of `out` (the policy's answer for the
/// jobs it sized) that uses a node where a placement of `others` (the jobs
/// it did not size, where they run) spans several nodes: such a job waits
/// for a round that sizes every job. Placements on one node stay.
void keep_distributed_apart(const std::vector<Placement>& others, std::vector<Placement>& out);

}  // namespace pollux

#endif  // POLLUX_INTERFERENCE_H

// SPDX-License-Identifier: GPL-2.0-or-later
// Goodput auto-scaling in sched/pollux's periodic round
// (pollux_autoscale=goodput; off by default), without Slurm. The rule is
// libgoodput's (pollux/autoscale.h: desired_nodes, AdaptDL's utility band):
// this module only applies it to a Slurm cluster under power saving.
//
// Before the policy (plan_autoscale): the target is autoscale_target of the
// jobs the policy sizes, the nodes paid for (on or booting) and the nodes
// that may take work (on, booting or powered down; not down or drained):
// the band's desired_nodes, never below the nodes that keep the running
// jobs at their minimums (whole nodes, besides those held by others).
// The policy then may use at most `target` nodes: the nodes something
// else holds (rigid jobs, elastic jobs the policy does not size, GPUs kept
// for the rigid queue) always, then nodes on (those holding the most GPUs
// first), booting next, powered down last.
// After the decisions (nodes_to_power_down): the nodes on that the policy
// may not use and that are idle (no rigid GPUs, no elastic job running
// there, promised or placed there by this round) are to be powered down
// (POWER_DOWN_ASAP: enact_power.h), promptly rather than after SuspendTime.
// Nodes are never resumed ahead of need here: a job placed on a powered-
// down node makes Slurm resume it, as without auto-scaling.
#ifndef POLLUX_SCHED_AUTOSCALE_ROUND_H
#define POLLUX_SCHED_AUTOSCALE_ROUND_H

#include <cstddef>
#include <vector>

#include "params.h"
#include "pollux/policy.h"
#include "round.h"

namespace pollux::sched {

/// The plan of a periodic round (AutoscalePlan::active false when
/// pollux_autoscale=off). `jobs` and `current`: the policy's view of the
/// jobs it sizes (JobInfo) and their present placements; `cap`: per
/// snapshot node, the GPUs the policy may distribute there (a node with
/// fewer than its GPUs is held by something else, and always stays).
AutoscalePlan plan_autoscale(const Snapshot& snap, const Params& params, const std::vector<JobInfo>& jobs,
                             const std::vector<Placement>& current, const std::vector<int>& cap);

/// The nodes (snapshot indices) to power down after the round's
/// `decisions`: on, not among the plan's usable nodes, and idle. Empty
/// when the plan is not active.
std::vector<std::size_t> nodes_to_power_down(const Snapshot& snap, const AutoscalePlan& plan,
                                             const std::vector<JobDecision>& decisions);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_AUTOSCALE_ROUND_H

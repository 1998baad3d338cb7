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
// After the decisions (plan_power): the nodes on that the policy may not
// use and that are idle (no rigid GPUs, no elastic job running there,
// promised or placed there by this round) are to be powered down
// (POWER_DOWN_ASAP: enact_power.h), promptly rather than after SuspendTime;
// the nodes within the target still powered down, where this round placed
// no job, are resumed ahead of need (POWER_UP), so that a running job grows
// there once they have booted rather than stopping to wait for the boot
// (the cluster grows to the target as pollux-sim's --autoscale goodput
// grows it). A job placed on a powered-down node makes Slurm resume it, as
// without auto-scaling.
// An arrivals round plans too (places_only): its new jobs go only to the
// nodes worth running, with every job counted, and it powers nothing.
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

/// Fills the plan's power_down (on, not among the usable nodes, idle) and
/// power_up (powered down, usable, no job of the round there) after the
/// round's `decisions`. Both empty when the plan is not active or only
/// places (an arrivals round's).
void plan_power(const Snapshot& snap, AutoscalePlan& plan, const std::vector<JobDecision>& decisions);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_AUTOSCALE_ROUND_H

// SPDX-License-Identifier: GPL-2.0-or-later
// Goodput auto-scaling's actions on nodes (autoscale_round.h decides them),
// through slurmctld's own node update: each node to power down gets
// POWER_DOWN_ASAP (what `scontrol power down asap` does), so that Slurm's
// power saving runs its SuspendProgram at once instead of after
// SuspendTime; each node to resume ahead of need gets POWER_UP (what
// `scontrol power up` does: Slurm's power saving runs its ResumeProgram,
// within its ResumeRate).
#ifndef POLLUX_SCHED_ENACT_POWER_H
#define POLLUX_SCHED_ENACT_POWER_H

#include <string>
#include <vector>

#include "sched/round.h"

namespace pollux::sched {

struct PowerReport {
  int powered_down = 0;
  int powered_up = 0;
  std::vector<std::string> lines;   ///< each action, for the log
  std::vector<std::string> errors;  ///< Slurm's refusals, with its error text
};

/// Powers down the round's nodes (RoundResult::autoscale.power_down) that
/// are still idle and on, and powers up its power_up nodes still idle and
/// powered down (not yet asked). Caller holds the job and node write locks (and
/// the configuration and partition read locks).
PowerReport enact_power(const Snapshot& snap, const RoundResult& round);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_ENACT_POWER_H

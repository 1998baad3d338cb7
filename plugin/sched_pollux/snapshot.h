// SPDX-License-Identifier: GPL-2.0-or-later
// Copying what a round needs out of slurmctld's records (under its locks,
// as briefly as possible).
#ifndef POLLUX_SCHED_SNAPSHOT_H
#define POLLUX_SCHED_SNAPSHOT_H

#include "sched/round.h"

namespace pollux::sched {

/// Builds the round's snapshot. Caller holds the job write lock (Slurm's
/// dependency test brings held jobs' dependencies up to date, as its main
/// loop does for the jobs it considers), the node, partition, configuration
/// and federation read locks. Nodes without GPUs are left out.
Snapshot take_snapshot(double now);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_SNAPSHOT_H

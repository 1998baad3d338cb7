// Where a job's checkpoints live: checkpoint_root(),
// default_job_checkpoint_root() and checkpoint_waiting() of pollux/agent.h,
// and the one rule about what an earlier job with the same id left there.
#ifndef POLLUX_AGENT_CHECKPOINT_ROOT_H
#define POLLUX_AGENT_CHECKPOINT_ROOT_H

#include "pollux/agent.h"

namespace pollux::agent_detail {

/// Whether what checkpoint_root() holds for a run is an earlier job's: a
/// job's first run (restart count 0) in the per-job default directory
/// (Slurm reuses job ids), which restore() sets aside.
bool holds_earlier_job(const AgentOptions& options, const JobEnvironment& env);

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_CHECKPOINT_ROOT_H

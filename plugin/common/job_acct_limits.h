// SPDX-License-Identifier: GPL-2.0-or-later
// What a job's QOS and association limits (accounting with
// AccountingStorageEnforce=limits) let an elastic job have, asked of
// slurmctld's own accounting-policy test, acct_policy_job_runnable_post_select()
// (the test Slurm makes before it starts a job on the nodes it selected),
// rather than re-implemented: MaxTRESPerJob and MaxTRESPerNode for gres/gpu
// and nodes, MaxNodesPerJob, MaxTRESPerUser, MaxTRESPerAccount and GrpTRES
// counting the usage of the user's and account's other running jobs, for
// the job's QOS, its partition's QOS and its association chain, as Slurm
// orders them. Without accounting limits every call is a no-op.
//
// A size is tested as (nodes, GPUs, one task per GPU): the job's request
// with its node, CPU, memory and gres/gpu counts replaced (job_size_fields.h;
// licences and the rest as requested). A running job's usage is already counted: it keeps
// what it holds, and a larger size is tested as the growth on top of
// today's usage when only a usage limit refused the full size
// (sched/size_limits.h). Known gaps: several elastic jobs of one user are
// each bounded by what the others hold now, so jobs sized in the same round
// may together exceed a per-user or group limit (Slurm then starts the
// first and keeps the next pending with its QOS reason until a round
// sizes it anew); and Slurm's test stops at the first limit exceeded (a
// QOS's group, then per-job, then per-user limits, then the next QOS's and
// the association's), so for a running job whose larger size a usage
// limit refuses first, the per-job limits checked after it are not seen.
// Every Slurm function called here exists with the same signature in
// 22.05 .. 26.05.
#ifndef POLLUX_SCHED_JOB_ACCT_LIMITS_H
#define POLLUX_SCHED_JOB_ACCT_LIMITS_H

#include <string>

#include "sched/elastic.h"
#include "slurm_api.h"

namespace pollux::sched {

struct AcctLimits {
  int max_gpus = 0;   ///< the most GPUs the limits allow within the range; 0: no limit below its range
  int max_nodes = 0;  ///< the most nodes likewise; 0: no limit below its range
  /// A pending job whose limits allow no size of its range: Slurm's reason
  /// for its smallest size, as squeue names it (e.g. "QOSMaxGRESPerJob").
  std::string refusal;
};

/// The job's bounds under its QOS and association limits, within `range`.
/// Caller holds the job write lock (Slurm's test writes the job's state
/// reason, which is put back) and the partition read lock; the assoc_mgr
/// locks are taken here.
AcctLimits acct_limits(job_record_t* job, const ElasticRange& range);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_ACCT_LIMITS_H

// What each policy is told about a simulated job (the artifact's
// get_{pollux,tiresias,optimus}_job_info; and Slurm's backfill). The simulator adds no policy
// logic: it only reports the job's state and, for Optimus+Oracle, the
// oracle's inputs taken from the traces.
#ifndef POLLUX_SIM_JOB_INFO_H
#define POLLUX_SIM_JOB_INFO_H

#include <cstdint>

#include "application.h"
#include "pollux/policy.h"
#include "pollux/typed_goodput.h"
#include "sim_job.h"
#include "workload.h"

namespace pollux::sim {

/// Largest replica count the simulator lets a job ask for (the artifact's 64).
inline constexpr int kMaxJobReplicas = 64;

/// The most GPUs a Pollux job may get: kMaxJobReplicas, or the
/// application's own cap (ncf's 1) when lower.
int max_job_gpus(const Application& app);

/// Pollux: what sched/pollux tells the policy, by the same rule
/// (pollux/job_description.h): the goodput speedup (linear before the
/// first profile; per GPU type when `ratios` is given), the job's size
/// range 0..min(64, an application's own cap such as ncf's 1) or
/// min_nodes.. when min_nodes > 1, M_max / m_min, `held` GPUs, age,
/// restarts, service, and D (JobInfo::restart_delay) = the larger of the
/// job's own restart cost (SimJob::restart_cost, 0 before it ran) and
/// `restart_delay` (job_restart_delay). (Pollux's rounds are sched/pollux's
/// own, sim/sched_round.h: this is the Sia-like policy's input.) With
/// `weigh_run` (sched/pollux's rule), a job
/// that holds GPUs since a restart has that run's start (SimJob::run_start)
/// as its run_start; the Sia-like policy, as Sia, weighs the whole life.
JobInfo pollux_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now, int held,
                        double restart_delay, int min_nodes,
                        const TypeRatios* ratios = nullptr, bool weigh_run = true);

/// Tiresias: the user's GPU count (requested_gpus = max_replicas), no model.
JobInfo tiresias_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now);

/// Slurm's backfill: the user's GPU count, exactly (rigid), `time_limit`
/// seconds, and how long it has held its GPUs (now - SimJob::run_start).
JobInfo backfill_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now, double time_limit);

/// Optimus+Oracle: max batch_size / m_min replicas (application cap wins),
/// and the oracle: iteration_time(R) = traced step time at the user's batch
/// on R GPUs packed onto nodes of `gpus_per_node`, with the same split into
/// micro-batches as the job would use (at least one accumulation step on
/// one GPU), and remaining_iterations = traced iterations to the last
/// epoch minus those to the current one at the user's batch (1 once the
/// last epoch is reached). `steps` must outlive the returned JobInfo.
JobInfo optimus_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now, StepTimeCache& steps,
                         int gpus_per_node);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_JOB_INFO_H

// The policy's view of an elastic job (see pollux/job_description.h).
#include "pollux/job_description.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace pollux {

double job_restart_delay(double restart_seconds, double restart_penalty) noexcept {
  // The penalty is the floor: a job's own measure leaves out what it
  // cannot see (Slurm's requeue, prolog and launch), and a job that
  // restarts fast is not moved more often than any job was before.
  return restart_seconds > restart_penalty && std::isfinite(restart_seconds) ? restart_seconds : restart_penalty;
}

JobInfo describe_elastic_job(const ElasticJobState& job, double restart_penalty, bool arrivals_round) {
  JobInfo info;
  info.id = job.id;
  info.submit_time = job.submit_time;
  // A job's own restart time where it has shown one: a job that restarts
  // in 10 s is moved more readily than one that takes 4 minutes.
  const double d = job_restart_delay(job.restart_seconds, restart_penalty);
  info.restart_delay = d;
  info.age = std::max(0.0, job.now - job.submit_time);
  if (arrivals_round) info.age = std::max(info.age, d * (job.restarts + 1));
  info.restarts = job.restarts;
  if (job.run_start > 0 && job.restarts > 0) {
    const double run = std::max(0.0, job.now - job.run_start);
    if (restart_factor(run, 1, d) < restart_factor(info.age, info.restarts, d)) {
      info.age = run;
      info.restarts = 1;
    }
  }
  info.attained_service = job.attained_service;
  info.speedup = job.speedup;
  info.speedup_by_type = job.speedup_by_type;
  info.min_replicas = std::max(job.min_gpus, 0);
  const int held = std::max(job.held_gpus, 0);
  info.max_replicas = std::min({job.max_gpus, std::max({2 * job.max_profiled_replicas, held, 1}),
                                job.max_gpus_by_batch > 0 ? std::max(job.max_gpus_by_batch, held) : INT_MAX});
  if (job.max_gpus_limit > 0) info.max_replicas = std::min(info.max_replicas, job.max_gpus_limit);
  info.max_replicas = std::max(info.max_replicas, info.min_replicas);
  info.requested_gpus = job.requested_gpus;
  info.min_nodes = job.min_nodes;
  info.max_nodes = job.max_nodes;
  info.allowed_nodes = job.allowed_nodes;
  return info;
}

}  // namespace pollux

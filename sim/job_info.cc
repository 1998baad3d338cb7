// Job descriptions for the policies (see job_info.h).
#include "job_info.h"

#include "pollux/job_description.h"

#include <algorithm>
#include <cmath>

namespace pollux::sim {
namespace {

JobInfo common_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now) {
  JobInfo info;
  info.id = id;
  info.submit_time = job.submit_time();
  info.age = now - job.submit_time();
  info.restarts = job.restarts();
  info.attained_service = job.attained_service();
  info.requested_gpus = w.num_replicas;
  info.min_replicas = 0;
  return info;
}

int capped(const Application& app, int replicas) {
  return app.spec().max_replicas > 0 ? std::min(replicas, app.spec().max_replicas) : replicas;
}

}  // namespace

int max_job_gpus(const Application& app) { return capped(app, kMaxJobReplicas); }

JobInfo pollux_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now, int held,
                        double restart_delay, int min_nodes, const TypeRatios* ratios,
                        bool weigh_run) {
  const Application& app = job.app();
  ElasticJobState s;
  static_cast<AgentMeasures&>(s) = job.measures();
  s.id = id;
  s.submit_time = job.submit_time();
  s.now = now;
  s.restarts = job.restarts();
  if (weigh_run && held > 0 && job.restarts() > 0) s.run_start = job.run_start();
  s.attained_service = job.attained_service();
  if (ratios != nullptr)
    s.speedup_by_type = job.typed_speedups(*ratios);
  else
    s.speedup = job.speedup_fn();
  s.held_gpus = held;
  s.max_gpus_by_batch = std::max(1, static_cast<int>(app.max_batch() / app.min_local_bsz()));
  s.max_gpus = max_job_gpus(app);
  s.requested_gpus = w.num_replicas;
  // A Slurm partition's MinNodes: a job not yet profiled at that scale may
  // still take one GPU per node.
  if (min_nodes > 1) {
    s.min_nodes = min_nodes;
    s.min_gpus = min_nodes;
  }
  return describe_elastic_job(s, restart_delay, false);
}

JobInfo tiresias_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now) {
  JobInfo info = common_info(job, w, id, now);
  info.max_replicas = w.num_replicas;
  return info;
}

JobInfo backfill_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now, double time_limit) {
  JobInfo info = common_info(job, w, id, now);
  info.min_replicas = w.num_replicas;
  info.max_replicas = w.num_replicas;
  info.time_limit = time_limit;
  if (job.gpus() > 0) info.run_time = now - job.run_start();
  return info;
}

JobInfo optimus_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now, StepTimeCache& steps,
                         int gpus_per_node) {
  JobInfo info = common_info(job, w, id, now);
  const Application& app = job.app();
  const double batch = static_cast<double>(w.batch_size);
  info.max_replicas = capped(app, std::max(1, static_cast<int>(w.batch_size / app.min_local_bsz())));
  const int last = app.max_epochs() - 1;
  info.remaining_iterations =
      last <= job.epoch() ? 1.0 : app.iterations(batch, last) - app.iterations(batch, job.epoch());
  StepTimeCache* cache = &steps;
  info.iteration_time = [cache, batch, gpus_per_node](int replicas) {
    const Application& a = cache->app();
    if (replicas < 1) return HUGE_VAL;
    std::vector<int> packed;
    for (int left = replicas; left > 0; left -= gpus_per_node) packed.push_back(std::min(left, gpus_per_node));
    const BatchConfig c = a.split_batch(batch, replicas, true);
    const StepTimes& t = cache->get(packed, c.atomic_batch);
    return t.step + (t.step - t.sync) * c.accum_steps;
  };
  return info;
}

}  // namespace pollux::sim

// Job descriptions for the policies (see job_info.h).
#include "job_info.h"

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

JobInfo pollux_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now) {
  JobInfo info = common_info(job, w, id, now);
  const Application& app = job.app();
  info.speedup = job.speedup_fn();
  const int by_batch = static_cast<int>(app.max_batch() / app.min_local_bsz());
  info.max_replicas = capped(app, std::min({std::max(2 * job.max_profiled_replicas(), 1), kMaxJobReplicas, by_batch}));
  return info;
}

JobInfo tiresias_job_info(SimJob& job, const WorkloadJob& w, std::uint64_t id, double now) {
  JobInfo info = common_info(job, w, id, now);
  info.max_replicas = w.num_replicas;
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

// Time limits for rigid jobs (see time_limit.h).
#include "time_limit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim_job.h"

namespace pollux::sim {

double rigid_runtime(StepTimeCache& steps, int replicas, long long batch, int gpus_per_node, double start_delay,
                     double slowdown) {
  std::vector<int> packed;
  for (int left = replicas; left > 0; left -= gpus_per_node) packed.push_back(std::min(left, gpus_per_node));
  SimJob job("runtime", 0, steps, batch);
  job.set_slowdown(slowdown);
  job.reallocate(packed, start_delay);
  // A day at a time; a job that needs more than ten years never ends.
  for (int day = 0; !job.complete(); ++day) {
    if (day == 3650)
      throw std::runtime_error(steps.app().name() + " on " + std::to_string(replicas) + " GPUs at batch " +
                               std::to_string(batch) + " does not complete in ten years");
    job.step(86400, 0.0);
  }
  return job.completion_time();
}

double user_time_limit(double runtime, double factor) {
  const double want = runtime * factor;
  if (want <= 15 * 60) return 15 * 60;
  if (want <= 30 * 60) return 30 * 60;
  return std::ceil(want / 3600) * 3600;
}

}  // namespace pollux::sim

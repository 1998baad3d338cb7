// Goodput and the per-job batch-size optimiser (see pollux/goodput.h).
#include "pollux/goodput.h"

#include <algorithm>
#include <cmath>

namespace pollux {

bool BatchLimits::valid() const noexcept {
  return std::isfinite(init_batch) && std::isfinite(max_batch) && init_batch > 0 &&
         init_batch <= max_batch && min_atomic >= 1 && min_atomic <= max_atomic;
}

double GoodputModel::efficiency(double total_batch) const noexcept {
  return statistical_efficiency(grad_, total_batch, init_batch_);
}

double GoodputModel::throughput(int nodes, int replicas, int atomic_batch, int accum_steps) const noexcept {
  return predict_throughput(perf_, nodes, replicas, atomic_batch, accum_steps);
}

double GoodputModel::goodput(int nodes, int replicas, int atomic_batch, int accum_steps) const noexcept {
  const double batch = static_cast<double>(replicas) * atomic_batch * (accum_steps + 1);
  return efficiency(batch) * throughput(nodes, replicas, atomic_batch, accum_steps);
}

BatchConfig GoodputModel::optimize(int nodes, int replicas, const BatchLimits& limits) const noexcept {
  BatchConfig best;
  if (nodes < 1 || replicas < nodes || !limits.valid()) return best;
  const double min_batch = std::max(limits.init_batch, double(limits.min_atomic) * replicas);
  const double max_batch = limits.max_batch;
  if (min_batch > max_batch) return best;  // R replicas cannot each get m_min
  constexpr double eps = 1e-8;  // tolerance of the floor/ceil steps
  const int k_max = kBatchCandidates - 1;
  const double ratio = max_batch / min_batch;
  for (int k = 0; k <= k_max; ++k) {
    // Geometric samples, exact at both ends.
    const double batch = k == 0 ? min_batch : k == k_max ? max_batch : min_batch * std::pow(ratio, double(k) / k_max);
    const double local = batch / replicas;
    int accum = 0, atomic = 0;
    if (limits.accumulation) {
      accum = static_cast<int>(std::ceil(local / limits.max_atomic - eps)) - 1;
      // One replica: at least two micro-steps so that the gradient noise
      // stays measurable once the batch grows past M0.
      if (replicas == 1 && local > limits.init_batch + eps) accum = std::max(accum, 1);
      atomic = static_cast<int>(std::ceil(local / (accum + 1) - eps));
    } else {
      atomic = replicas == 1 ? static_cast<int>(std::ceil(limits.init_batch - eps))
                             : static_cast<int>(std::ceil(local - eps));
    }
    // Rounding m up may overshoot M_max; step it back so that the total
    // batch never exceeds the job's limit.
    const double cap = std::floor(limits.max_batch / (double(replicas) * (accum + 1)) + eps);
    atomic = static_cast<int>(std::min<double>(atomic, cap));
    if (atomic < limits.min_atomic || atomic > limits.max_atomic) continue;
    const double g = goodput(nodes, replicas, atomic, accum);
    if (g > best.goodput) best = BatchConfig{atomic, accum, g};
  }
  return best;
}

}  // namespace pollux

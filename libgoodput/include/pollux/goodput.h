// Goodput = throughput x statistical efficiency, and the per-job choice of
// (atomic batch, accumulation steps) for an allocation (section 3.3).
#ifndef POLLUX_GOODPUT_H
#define POLLUX_GOODPUT_H

#include "pollux/efficiency.h"
#include "pollux/throughput.h"

namespace pollux {

/// A job's batch-size limits (user-given or from memory profiling).
struct BatchLimits {
  double init_batch = 1;     ///< M0, the batch the job was tuned for
  double max_batch = 1;      ///< M_max >= M0
  int min_atomic = 1;        ///< m_min, smallest per-replica micro-batch
  int max_atomic = 1;        ///< m_max, largest micro-batch that fits in memory
  bool accumulation = true;  ///< allow s > 0 gradient-accumulation steps
  /// True when 0 < init_batch <= max_batch and 1 <= min_atomic <= max_atomic.
  bool valid() const noexcept;
};

/// A chosen configuration; goodput == 0 means no valid configuration.
struct BatchConfig {
  int atomic_batch = 0;
  int accum_steps = 0;
  double goodput = 0;
  /// Total batch M = replicas * m * (s + 1).
  long long total_batch(int replicas) const noexcept {
    return static_cast<long long>(replicas) * atomic_batch * (accum_steps + 1);
  }
};

class GoodputModel {
 public:
  /// Number of total batch sizes sampled by optimize() (the reference's 50).
  static constexpr int kBatchCandidates = 50;

  GoodputModel(const PerfParams& perf, const GradStats& grad, double init_batch) noexcept
      : perf_(perf), grad_(grad), init_batch_(init_batch) {}

  double efficiency(double total_batch) const noexcept;
  double throughput(int nodes, int replicas, int atomic_batch, int accum_steps) const noexcept;
  double goodput(int nodes, int replicas, int atomic_batch, int accum_steps) const noexcept;

  /// Best (m, s) for `replicas` GPUs on `nodes` nodes: samples total batches
  /// geometrically in [max(M0, m_min * R), M_max], splits each local batch
  /// into s + 1 micro-steps of at most m_max (s >= 1 when R == 1 and the
  /// local batch exceeds M0), m = ceil(local / (s + 1)) lowered if needed
  /// so that R * m * (s + 1) <= M_max, and returns the argmax of goodput.
  /// Never returns m outside [m_min, m_max] or a total batch above M_max;
  /// goodput 0 if no candidate is valid (e.g. R * m_min > M_max).
  BatchConfig optimize(int nodes, int replicas, const BatchLimits& limits) const noexcept;

  const PerfParams& perf() const noexcept { return perf_; }
  const GradStats& grad() const noexcept { return grad_; }
  double init_batch() const noexcept { return init_batch_; }

 private:
  PerfParams perf_;
  GradStats grad_;
  double init_batch_;
};

}  // namespace pollux

#endif  // POLLUX_GOODPUT_H

// speedup(N, R) = best goodput on (N nodes, R replicas) / best goodput on
// one GPU, memoised because the cluster policy evaluates it very often.
#ifndef POLLUX_SPEEDUP_H
#define POLLUX_SPEEDUP_H

#include <functional>
#include <vector>

#include "pollux/goodput.h"

namespace pollux {

/// What the cluster policy needs of a job: its speedup at (nodes, replicas).
/// speedup(n, 0) must be 0; an empty SpeedupFn means "no model yet" and the
/// policies treat it as linear in replicas.
using SpeedupFn = std::function<double(int nodes, int replicas)>;

/// Goodput-model speedup with a memo table for nodes, replicas < memo_size.
/// Not thread-safe (the memo is filled lazily): one instance per thread.
class SpeedupFunction {
 public:
  SpeedupFunction(const GoodputModel& model, const BatchLimits& limits, int memo_size = 65);

  /// 0 when replicas <= 0 or nodes <= 0; otherwise goodput ratio to (1, 1).
  double operator()(int nodes, int replicas) const;

  double base_goodput() const noexcept { return base_goodput_; }
  const GoodputModel& model() const noexcept { return model_; }
  const BatchLimits& limits() const noexcept { return limits_; }

 private:
  GoodputModel model_;
  BatchLimits limits_;
  double base_goodput_;
  int memo_size_;
  mutable std::vector<double> memo_;  // memo_size_^2, < 0 = not computed
};

}  // namespace pollux

#endif  // POLLUX_SPEEDUP_H

// Memoised speedup function (see pollux/speedup.h).
#include "pollux/speedup.h"

#include <stdexcept>

namespace pollux {

SpeedupFunction::SpeedupFunction(const GoodputModel& model, const BatchLimits& limits, int memo_size)
    : model_(model), limits_(limits), base_goodput_(0), memo_size_(memo_size < 1 ? 1 : memo_size),
      memo_(static_cast<std::size_t>(memo_size_) * memo_size_, -1.0) {
  if (!limits.valid()) throw std::invalid_argument("SpeedupFunction: invalid batch limits");
  base_goodput_ = model_.optimize(1, 1, limits_).goodput;
  if (!(base_goodput_ > 0))
    throw std::invalid_argument("SpeedupFunction: no valid configuration on one GPU");
}

double SpeedupFunction::operator()(int nodes, int replicas) const {
  if (nodes <= 0 || replicas <= 0) return 0.0;
  const bool memo = nodes < memo_size_ && replicas < memo_size_;
  double* slot = memo ? &memo_[static_cast<std::size_t>(nodes) * memo_size_ + replicas] : nullptr;
  if (slot != nullptr && *slot >= 0) return *slot;
  const double s = model_.optimize(nodes, replicas, limits_).goodput / base_goodput_;
  if (slot != nullptr) *slot = s;
  return s;
}

}  // namespace pollux

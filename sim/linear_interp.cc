// One-dimensional linear interpolation (see linear_interp.h).
#include "linear_interp.h"

#include <algorithm>

namespace pollux::sim {

std::optional<double> interp_linear(const std::vector<double>& xs, const std::vector<double>& ys, double x,
                                    OutOfRange mode) {
  if (xs.empty() || xs.size() != ys.size()) return std::nullopt;
  if (x <= xs.front() || x >= xs.back()) {
    if (x == xs.front()) return ys.front();
    if (x == xs.back()) return ys.back();
    if (mode == OutOfRange::kNone) return std::nullopt;
    return x < xs.front() ? ys.front() : ys.back();
  }
  // xs.front() < x < xs.back(): the knot interval [lo, hi] holding x.
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  const std::size_t lo = hi - 1;
  if (x == xs[lo]) return ys[lo];
  const double t = (x - xs[lo]) / (xs[hi] - xs[lo]);
  return ys[lo] + t * (ys[hi] - ys[lo]);
}

}  // namespace pollux::sim

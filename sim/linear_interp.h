// One-dimensional piecewise-linear interpolation over increasing knots.
#ifndef POLLUX_SIM_LINEAR_INTERP_H
#define POLLUX_SIM_LINEAR_INTERP_H

#include <optional>
#include <vector>

namespace pollux::sim {

enum class OutOfRange {
  kNone,   ///< outside [xs.front(), xs.back()]: no value (SciPy's interp1d raises)
  kClamp,  ///< outside: the end value (NumPy's interp)
};

/// Linear interpolation of (xs, ys) at x. `xs` must be strictly increasing
/// and as long as `ys` (at least one knot). Exact at the knots.
std::optional<double> interp_linear(const std::vector<double>& xs, const std::vector<double>& ys, double x,
                                    OutOfRange mode);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_LINEAR_INTERP_H

// Internal pieces of the throughput model shared by prediction and fitting.
#ifndef POLLUX_SRC_THROUGHPUT_TERMS_H
#define POLLUX_SRC_THROUGHPUT_TERMS_H

#include <algorithm>
#include <cmath>

namespace pollux::detail {

/// Stands in for exact zeros, as the reference implementation does.
inline constexpr double kTiny = 1e-8;

enum class Link { kNone, kIntraNode, kInterNode };

/// Which link bottlenecks the all-reduce, and the retrogression factor
/// max(R - 2, kTiny) that multiplies its beta.
struct SyncTerms {
  Link link;
  double rounds;
};

inline SyncTerms sync_terms(int nodes, int replicas) noexcept {
  const Link link = nodes > 1 ? Link::kInterNode : replicas > 1 ? Link::kIntraNode : Link::kNone;
  return {link, std::max(static_cast<double>(replicas) - 2.0, kTiny)};
}

/// log((a^g + b^g)^(1/g)) computed stably in log space; a, b > 0.
inline double log_power_sum(double a, double b, double g) noexcept {
  const double la = g * std::log(a), lb = g * std::log(b);
  const double hi = std::max(la, lb);
  return (hi + std::log(std::exp(la - hi) + std::exp(lb - hi))) / g;
}

}  // namespace pollux::detail

#endif  // POLLUX_SRC_THROUGHPUT_TERMS_H

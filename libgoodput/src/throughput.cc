// The throughput model (see pollux/throughput.h).
#include "pollux/throughput.h"

#include <algorithm>
#include <cmath>

#include "throughput_terms.h"

namespace pollux {

std::array<double, PerfParams::kCount> PerfParams::to_array() const noexcept {
  return {alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma, alpha_1};
}

PerfParams PerfParams::from_array(const std::array<double, kCount>& v) noexcept {
  return PerfParams{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
}

bool PerfParams::valid() const noexcept {
  for (double x : to_array())
    if (!std::isfinite(x)) return false;
  return alpha_c >= 0 && beta_c >= 0 && alpha_n >= 0 && beta_n >= 0 && alpha_r >= 0 &&
         beta_r >= 0 && alpha_1 >= 0 && gamma >= 1.0 && gamma <= 10.0;
}

double predict_grad_time(const PerfParams& p, double atomic_batch) noexcept {
  return p.alpha_c + p.beta_c * atomic_batch;
}

double predict_sync_time(const PerfParams& p, int nodes, int replicas) noexcept {
  const detail::SyncTerms t = detail::sync_terms(nodes, replicas);
  switch (t.link) {
    case detail::Link::kInterNode: return p.alpha_n + p.beta_n * t.rounds;
    case detail::Link::kIntraNode: return p.alpha_r + p.beta_r * t.rounds;
    case detail::Link::kNone: break;
  }
  return (p.sharded ? detail::kTiny : p.alpha_1) + detail::kTiny * t.rounds;
}

double predict_micro_step_time(const PerfParams& p, int nodes, int replicas, double atomic_batch) noexcept {
  const double grad = predict_grad_time(p, atomic_batch);
  if (!p.sharded) return grad;
  return std::exp(detail::log_power_sum(grad, predict_sync_time(p, nodes, replicas), p.gamma));
}

double predict_step_time(const PerfParams& p, int nodes, int replicas, double atomic_batch) noexcept {
  if (p.sharded) return predict_micro_step_time(p, nodes, replicas, atomic_batch) + p.alpha_1;
  const double grad = predict_grad_time(p, atomic_batch);
  const double sync = predict_sync_time(p, nodes, replicas);
  return std::exp(detail::log_power_sum(grad, sync, p.gamma));
}

double predict_iter_time(const PerfParams& p, int nodes, int replicas, double atomic_batch,
                         int accum_steps) noexcept {
  return accum_steps * predict_micro_step_time(p, nodes, replicas, atomic_batch) +
         predict_step_time(p, nodes, replicas, atomic_batch);
}

double predict_throughput(const PerfParams& p, int nodes, int replicas, double atomic_batch,
                          int accum_steps) noexcept {
  const double batch = static_cast<double>(replicas) * atomic_batch * (accum_steps + 1);
  return batch / predict_iter_time(p, nodes, replicas, atomic_batch, accum_steps);
}

}  // namespace pollux

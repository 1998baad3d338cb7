// Gradient-noise estimator (see pollux/grad_noise.h for the formulas).
#include "pollux/grad_noise.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pollux {

GradNoiseEstimator::GradNoiseEstimator(double init_batch, double smoothing)
    : init_batch_(init_batch), smoothing_(smoothing) {
  if (!(init_batch > 0.0) || !std::isfinite(init_batch))
    throw std::invalid_argument("GradNoiseEstimator: init_batch must be positive and finite");
  if (!(smoothing > 0.0 && smoothing < 1.0))
    throw std::invalid_argument("GradNoiseEstimator: smoothing must be in (0, 1)");
}

namespace {

// Bias-corrected EMA step: the biased average and the weight it has
// accumulated; their ratio is the unbiased estimate.
void ema_update(double& biased, double& unbias, double value, double theta) {
  biased = theta * biased + (1.0 - theta) * value;
  unbias = theta * unbias + (1.0 - theta);
}

}  // namespace

bool GradNoiseEstimator::update(double local_sqr_mean, double sync_sqr, int num_grads,
                                double atomic_batch) noexcept {
  if (num_grads < 2 || !(atomic_batch > 0.0) || !std::isfinite(local_sqr_mean) ||
      !std::isfinite(sync_sqr) || !std::isfinite(atomic_batch))
    return false;
  const double n = num_grads;
  const double var_micro = (local_sqr_mean - sync_sqr) * n / (n - 1.0);
  const double sqr = sync_sqr - var_micro / n;
  const double var = var_micro * atomic_batch / init_batch_;
  // A larger batch moves the average further per step: decay^(M / M0).
  const double theta = std::pow(smoothing_, n * atomic_batch / init_batch_);
  ema_update(state_.sqr_biased, state_.sqr_unbias, sqr, theta);
  ema_update(state_.var_biased, state_.var_unbias, var, theta);
  ++state_.updates;
  return true;
}

bool GradNoiseEstimator::update_two_step(double prev_sqr, double cur_sqr, double mean_sqr,
                                         double atomic_batch) noexcept {
  if (!(atomic_batch > 0.0) || !std::isfinite(prev_sqr) || !std::isfinite(cur_sqr) ||
      !std::isfinite(mean_sqr) || !std::isfinite(atomic_batch))
    return false;
  // Two samples of b examples each; this step's own batch is b, which sets
  // the decay.
  const double local = 0.5 * (prev_sqr + cur_sqr);
  const double var_micro = 2.0 * (local - mean_sqr);
  const double sqr = mean_sqr - var_micro / 2.0;
  const double var = var_micro * atomic_batch / init_batch_;
  const double theta = std::pow(smoothing_, atomic_batch / init_batch_);
  ema_update(state_.sqr_biased, state_.sqr_unbias, sqr, theta);
  ema_update(state_.var_biased, state_.var_unbias, var, theta);
  ++state_.updates;
  return true;
}

GradStats GradNoiseEstimator::stats() const noexcept {
  GradStats g;
  if (state_.sqr_unbias > 0.0) g.sqr = state_.sqr_biased / state_.sqr_unbias;
  if (state_.var_unbias > 0.0) g.var = state_.var_biased / state_.var_unbias;
  g.sqr = std::max(g.sqr, 0.0);
  g.var = std::max(g.var, kMinVar);
  return g;
}

bool GradNoiseEstimator::restore(const State& s) noexcept {
  if (!std::isfinite(s.sqr_biased) || !std::isfinite(s.sqr_unbias) || !std::isfinite(s.var_biased) ||
      !std::isfinite(s.var_unbias) || s.sqr_unbias < 0.0 || s.var_unbias < 0.0 || s.updates < 0)
    return false;
  state_ = s;
  return true;
}

}  // namespace pollux

// Online estimator of |g|^2 and tr(Sigma) from squared gradient norms
// taken before and after the all-reduce (Pollux section 3.1, as in AdaScale
// and AdaptDL's GradientNoiseScale).
//
// Per optimizer step, with n = R * (s + 1) micro-batch gradients of b
// examples each, L = mean of their squared norms and G = squared norm of
// their average:
//   var_micro = (L - G) * n / (n - 1)       variance of one micro-batch gradient
//   sqr       = G - var_micro / n           unbiased |g|^2
//   var       = var_micro * b / M0          referred to the initial batch
// Both are smoothed by a bias-corrected exponential moving average whose
// decay per step is smoothing^(M / M0), M = n * b.
#ifndef POLLUX_GRAD_NOISE_H
#define POLLUX_GRAD_NOISE_H

#include "pollux/efficiency.h"

namespace pollux {

class GradNoiseEstimator {
 public:
  /// Serialisable state (checkpointed by the agent, restored after requeue).
  struct State {
    double sqr_biased = 0.0;
    double sqr_unbias = 0.0;
    double var_biased = 0.0;
    double var_unbias = 0.0;
    long long updates = 0;
  };

  /// Smallest variance reported, so that efficiency stays defined.
  static constexpr double kMinVar = 1e-6;

  /// `init_batch` is M0 (> 0); `smoothing` is the per-M0-step decay in (0, 1).
  /// Throws std::invalid_argument on out-of-range arguments.
  explicit GradNoiseEstimator(double init_batch, double smoothing = 0.999);

  /// One optimizer step from `num_grads` >= 2 micro-batch gradients of
  /// `atomic_batch` examples each. Non-finite inputs are ignored (returns
  /// false) so that one bad step cannot poison the average.
  bool update(double local_sqr_mean, double sync_sqr, int num_grads, double atomic_batch) noexcept;

  /// One replica without accumulation: the gradients of two consecutive
  /// steps serve as the two samples. `prev_sqr` and `cur_sqr` are their
  /// squared norms, `mean_sqr` the squared norm of their average.
  bool update_two_step(double prev_sqr, double cur_sqr, double mean_sqr, double atomic_batch) noexcept;

  /// True once at least one update was accepted.
  bool has_estimate() const noexcept { return state_.updates > 0; }

  /// Smoothed, bias-corrected statistics, clamped to sqr >= 0, var >= kMinVar.
  GradStats stats() const noexcept;

  double init_batch() const noexcept { return init_batch_; }
  const State& state() const noexcept { return state_; }
  /// Restores a checkpointed state; rejects (returns false) non-finite values.
  bool restore(const State& state) noexcept;

 private:
  double init_batch_;
  double smoothing_;
  State state_;
};

}  // namespace pollux

#endif  // POLLUX_GRAD_NOISE_H

// Statistical efficiency and the AdaScale gain (Pollux section 3.1).
//
// A job's gradient statistics are measured at its initial batch size M0:
// `sqr` estimates |g|^2 and `var` estimates tr(Sigma) for a batch of M0
// examples. Training at batch M = scale * M0 makes `gain` times the progress
// of one M0 step per optimizer step, so efficiency = gain / scale.
#ifndef POLLUX_EFFICIENCY_H
#define POLLUX_EFFICIENCY_H

namespace pollux {

/// Gradient statistics of a job, referred to its initial batch size M0.
struct GradStats {
  double sqr = 0.0;  ///< |g|^2: squared norm of the true gradient (>= 0).
  double var = 0.0;  ///< tr(Sigma) of the gradient of one M0 batch (> 0).
};

/// AdaScale gain at total batch `batch` for a job whose initial batch is
/// `init_batch`: (var + sqr) / (var / scale + sqr), in [1, scale] for
/// scale >= 1. Returns 1 when the denominator is not positive.
double adascale_gain(const GradStats& grad, double batch, double init_batch) noexcept;

/// Statistical efficiency gain / scale: 1 at M0, decreasing in the batch.
double statistical_efficiency(const GradStats& grad, double batch, double init_batch) noexcept;

/// Gradient noise scale B_noise = var / sqr * M0 (infinity when sqr == 0).
double gradient_noise_scale(const GradStats& grad, double init_batch) noexcept;

}  // namespace pollux

#endif  // POLLUX_EFFICIENCY_H

// Statistical efficiency and the AdaScale gain (see pollux/efficiency.h).
#include "pollux/efficiency.h"

#include <limits>

namespace pollux {

double adascale_gain(const GradStats& grad, double batch, double init_batch) noexcept {
  const double scale = batch / init_batch;
  const double denom = grad.var / scale + grad.sqr;
  if (!(denom > 0.0)) return 1.0;  // also catches NaN
  return (grad.var + grad.sqr) / denom;
}

double statistical_efficiency(const GradStats& grad, double batch, double init_batch) noexcept {
  return adascale_gain(grad, batch, init_batch) * init_batch / batch;
}

double gradient_noise_scale(const GradStats& grad, double init_batch) noexcept {
  if (!(grad.sqr > 0.0)) return std::numeric_limits<double>::infinity();
  return grad.var / grad.sqr * init_batch;
}

}  // namespace pollux

// Norms whose estimate is the given statistics (see emulated_norms.h).
//
// Definitions (libgoodput's GradNoiseEstimator, as the agent feeds it in
// agent/src/step_statistics.cc): G = |true gradient|^2, V = tr(Sigma)/M0
// (the variance of the mean gradient of an M0 batch), so the mean gradient
// of b examples has E|g_b|^2 = G + V M0 / b.
//
// R >= 2 replicas (GradNoiseEstimator::update): n = R local gradients,
// each of b = m (s + 1) examples; the agent gets L = (sum of the ranks'
// local_sqr) / n and S = sync_sqr, the squared norm of their mean (a batch
// of M = n b), and estimates
//   var_micro = (L - S) n / (n - 1),  sqr = S - var_micro / n,
//   var = var_micro b / M0.
// Reporting the expectations L = G + V M0 / b and S = G + V M0 / M:
//   L - S = V M0 (1/b - 1/(n b)) = (V M0 / b)(n - 1)/n, so
//   var_micro = V M0 / b, var = V, sqr = S - V M0 / (n b) = G.
//
// One replica (update_two_step): the kKeep step reports its S_1, the
// kCompare step its S_2 with prev_sqr = S_1 and dot_prev = <g_1, g_2>,
// whose expectation for independent batches is G. With c = V M0 / M and
// S_1 = S_2 = G + c the agent takes mean = (S_1 + S_2 + 2 G) / 4 =
// G + c / 2, local = G + c, var_micro = 2 (local - mean) = c, so
// sqr = mean - c / 2 = G and var = c M / M0 = V.
//
// Every estimate is then exactly (G, V), and the agent's exponential
// average of them is (G, V) wherever G and V hold still.
#include "emulated_norms.h"

namespace pollux::replay {

GradientNorms emulated_norms(const GradStats& g, double init_batch, int replicas, int atomic, int accum,
                             TwoStep phase, double kept_sqr) {
  const double local_batch = static_cast<double>(atomic) * (accum + 1);
  const double batch = local_batch * replicas;
  GradientNorms n;
  n.local_grads = 1;
  n.local_sqr = g.sqr + g.var * init_batch / local_batch;
  n.sync_sqr = g.sqr + g.var * init_batch / batch;
  if (phase == TwoStep::kCompare) {
    n.has_prev = true;
    n.prev_sqr = kept_sqr;
    n.dot_prev = g.sqr;
  }
  return n;
}

}  // namespace pollux::replay

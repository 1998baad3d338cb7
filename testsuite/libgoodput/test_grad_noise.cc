// The gradient-noise estimator recovers |g|^2 and tr(Sigma) from synthetic
// Gaussian gradients whose true statistics are known.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "pollux/grad_noise.h"

namespace pollux {
namespace {

// A problem with a fixed true gradient g and per-example gradient noise
// N(0, s2 I) in d dimensions: a micro-batch of b examples has gradient
// g + N(0, s2 / b I), so tr(Sigma) of one M0 batch is d * s2 / M0.
class SyntheticGradients {
 public:
  SyntheticGradients(int dim, double sqr, double s2, unsigned seed)
      : g_(dim, std::sqrt(sqr / dim)), s2_(s2), rng_(seed) {}

  std::vector<double> sample(double batch) {
    std::normal_distribution<double> noise(0.0, std::sqrt(s2_ / batch));
    std::vector<double> v(g_);
    for (double& x : v) x += noise(rng_);
    return v;
  }
  double true_var(double init_batch) const { return g_.size() * s2_ / init_batch; }

 private:
  std::vector<double> g_;
  double s2_;
  std::mt19937_64 rng_;
};

double sqnorm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return s;
}

TEST(GradNoise, RecoversKnownStatisticsWithManyReplicas) {
  const double m0 = 32, sqr = 1.0, s2 = 0.064;
  const int dim = 500, replicas = 4, accum = 1, atomic = 16;
  const int n = replicas * (accum + 1);
  SyntheticGradients prob(dim, sqr, s2, 7);
  GradNoiseEstimator est(m0);
  for (int step = 0; step < 2000; ++step) {
    std::vector<double> sum(dim, 0.0);
    double local = 0;
    for (int i = 0; i < n; ++i) {
      const auto grad = prob.sample(atomic);
      local += sqnorm(grad) / n;
      for (int k = 0; k < dim; ++k) sum[k] += grad[k] / n;
    }
    ASSERT_TRUE(est.update(local, sqnorm(sum), n, atomic));
  }
  const GradStats got = est.stats();
  EXPECT_NEAR(got.sqr, sqr, 0.05 * sqr);
  EXPECT_NEAR(got.var, prob.true_var(m0), 0.05 * prob.true_var(m0));
}

TEST(GradNoise, TwoStepFallbackForOneReplica) {
  const double m0 = 64, sqr = 0.5, s2 = 0.2;
  const int dim = 400;
  SyntheticGradients prob(dim, sqr, s2, 11);
  GradNoiseEstimator est(m0);
  auto prev = prob.sample(m0);
  for (int step = 0; step < 4000; ++step) {
    const auto cur = prob.sample(m0);
    std::vector<double> mean(dim);
    for (int k = 0; k < dim; ++k) mean[k] = 0.5 * (prev[k] + cur[k]);
    ASSERT_TRUE(est.update_two_step(sqnorm(prev), sqnorm(cur), sqnorm(mean), m0));
    prev = cur;
  }
  const GradStats got = est.stats();
  EXPECT_NEAR(got.sqr, sqr, 0.05 * sqr);
  EXPECT_NEAR(got.var, prob.true_var(m0), 0.05 * prob.true_var(m0));
}

TEST(GradNoise, BiasCorrectionMakesTheFirstStepExact) {
  GradNoiseEstimator est(10);
  // L = 5, G = 3, n = 2: var_micro = 4, sqr = 1, var = 4 * b / M0 = 8.
  ASSERT_TRUE(est.update(5.0, 3.0, 2, 20));
  EXPECT_NEAR(est.stats().sqr, 1.0, 1e-12);
  EXPECT_NEAR(est.stats().var, 8.0, 1e-12);
}

TEST(GradNoise, LargerBatchesMoveTheAverageFurther) {
  // Two estimators see the same two observations, one at 8x the batch.
  GradNoiseEstimator small(10), large(10);
  small.update(5.0, 3.0, 2, 5);   // M = M0
  large.update(5.0, 3.0, 2, 40);  // M = 8 M0
  small.update(3.0, 3.0, 2, 5);   // new value: sqr 3, var 0
  large.update(3.0, 3.0, 2, 40);
  // The large-batch average weighs the newer observation more.
  EXPECT_GT(large.stats().sqr, small.stats().sqr);
}

TEST(GradNoise, ClampsAndRejectsBadInput) {
  GradNoiseEstimator est(10);
  EXPECT_FALSE(est.has_estimate());
  EXPECT_EQ(est.stats().sqr, 0.0);
  EXPECT_EQ(est.stats().var, GradNoiseEstimator::kMinVar);
  EXPECT_FALSE(est.update(1.0, 1.0, 1, 10));  // needs two gradients
  EXPECT_FALSE(est.update(std::numeric_limits<double>::quiet_NaN(), 1.0, 4, 10));
  EXPECT_FALSE(est.update(1.0, std::numeric_limits<double>::infinity(), 4, 10));
  EXPECT_FALSE(est.update(1.0, 1.0, 4, 0));
  EXPECT_FALSE(est.has_estimate());
  // A noisy step can make sqr negative: it is reported as 0.
  ASSERT_TRUE(est.update(1.0, 0.1, 2, 10));
  EXPECT_EQ(est.stats().sqr, 0.0);
  EXPECT_THROW(GradNoiseEstimator(0.0), std::invalid_argument);
  EXPECT_THROW(GradNoiseEstimator(10, 1.0), std::invalid_argument);
}

TEST(GradNoise, StateRoundTrips) {
  GradNoiseEstimator a(16), b(16);
  a.update(4.0, 2.0, 4, 8);
  a.update(6.0, 2.5, 4, 8);
  ASSERT_TRUE(b.restore(a.state()));
  EXPECT_EQ(b.stats().sqr, a.stats().sqr);
  EXPECT_EQ(b.stats().var, a.stats().var);
  GradNoiseEstimator::State bad = a.state();
  bad.var_biased = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(b.restore(bad));
}

}  // namespace
}  // namespace pollux

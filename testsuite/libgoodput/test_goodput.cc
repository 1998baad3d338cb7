// The per-job optimiser of (atomic batch, accumulation steps).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "pollux/goodput.h"

namespace pollux {
namespace {

struct RandomCase {
  GoodputModel model;
  BatchLimits limits;
  int nodes, replicas;
};

RandomCase random_case(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, u(rng)); };
  PerfParams p{log_uniform(1e-3, 0.2), log_uniform(1e-5, 1e-2), log_uniform(1e-3, 1.0),
               log_uniform(1e-4, 0.1),  log_uniform(1e-4, 0.3), log_uniform(1e-5, 0.05),
               1.0 + 9.0 * u(rng)};
  GradStats g{log_uniform(1e-4, 10), log_uniform(1e-3, 100)};
  BatchLimits lim;
  lim.init_batch = std::round(log_uniform(8, 1024));
  lim.max_batch = std::round(lim.init_batch * log_uniform(1, 64));
  lim.min_atomic = static_cast<int>(log_uniform(1, 32));
  lim.max_atomic = lim.min_atomic + static_cast<int>(log_uniform(1, 512));
  lim.accumulation = u(rng) < 0.8;
  const int replicas = 1 + static_cast<int>(log_uniform(1, 64)) - 1;
  const int nodes = std::max(1, std::min(replicas, static_cast<int>(std::ceil(replicas / (1 + 7 * u(rng))))));
  return {GoodputModel(p, g, lim.init_batch), lim, nodes, replicas};
}

TEST(Optimize, NeverLeavesTheLimits) {
  std::mt19937_64 rng(42);
  int valid = 0;
  for (int i = 0; i < 3000; ++i) {
    const RandomCase c = random_case(rng);
    const BatchConfig cfg = c.model.optimize(c.nodes, c.replicas, c.limits);
    if (cfg.goodput == 0) {
      // Only allowed when no candidate can be valid.
      continue;
    }
    ++valid;
    SCOPED_TRACE(i);
    EXPECT_GE(cfg.atomic_batch, c.limits.min_atomic);
    EXPECT_LE(cfg.atomic_batch, c.limits.max_atomic);
    EXPECT_GE(cfg.accum_steps, 0);
    EXPECT_LE(cfg.total_batch(c.replicas), c.limits.max_batch);
    if (!c.limits.accumulation) EXPECT_EQ(cfg.accum_steps, 0);
    if (c.limits.accumulation && c.replicas == 1 && cfg.total_batch(1) > c.limits.init_batch)
      EXPECT_GE(cfg.accum_steps, 1) << "one replica needs two micro-steps to measure noise";
    EXPECT_DOUBLE_EQ(cfg.goodput, c.model.goodput(c.nodes, c.replicas, cfg.atomic_batch, cfg.accum_steps));
  }
  EXPECT_GT(valid, 2000);
}

TEST(Optimize, IsCloseToBruteForce) {
  // Exhaustive search over every (m, s) within the limits; the 50 geometric
  // samples of the reference should lose little.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    RandomCase c = random_case(rng);
    c.limits.accumulation = true;
    c.limits.max_atomic = std::min(c.limits.max_atomic, 256);
    const BatchConfig cfg = c.model.optimize(c.nodes, c.replicas, c.limits);
    if (cfg.goodput == 0) continue;
    double best = 0;
    for (int m = c.limits.min_atomic; m <= c.limits.max_atomic; ++m)
      for (int s = 0; s < 64; ++s) {
        const double total = double(c.replicas) * m * (s + 1);
        if (total < std::max(c.limits.init_batch, double(c.limits.min_atomic) * c.replicas) ||
            total > c.limits.max_batch)
          continue;
        // The optimiser's rule, not a loss: one replica above M0 accumulates.
        if (c.replicas == 1 && total > c.limits.init_batch && s == 0) continue;
        best = std::max(best, c.model.goodput(c.nodes, c.replicas, m, s));
      }
    EXPECT_GE(cfg.goodput, 0.95 * best) << "case " << i;
  }
}

TEST(Optimize, NoisierGradientsPreferLargerBatches) {
  const PerfParams p{0.01, 0.001, 0.1, 0.01, 0.05, 0.005, 1.5};
  const BatchLimits lim{64, 8192, 8, 256, true};
  const GoodputModel noisy(p, GradStats{0.01, 10.0}, 64);  // B_noise = 64000
  const GoodputModel clean(p, GradStats{10.0, 0.01}, 64);  // B_noise = 0.064
  const BatchConfig a = noisy.optimize(1, 4, lim), b = clean.optimize(1, 4, lim);
  EXPECT_GT(a.total_batch(4), b.total_batch(4));
  EXPECT_EQ(b.total_batch(4), 64);  // no noise: stay at M0
}

TEST(Optimize, RejectsImpossibleAllocations) {
  const GoodputModel m(PerfParams{}, GradStats{1, 1}, 32);
  const BatchLimits lim{32, 256, 16, 64, true};
  EXPECT_EQ(m.optimize(1, 32, lim).goodput, 0.0);  // 32 x 16 > 256
  EXPECT_EQ(m.optimize(2, 1, lim).goodput, 0.0);   // more nodes than replicas
  EXPECT_EQ(m.optimize(0, 0, lim).goodput, 0.0);
  EXPECT_EQ(m.optimize(1, 1, BatchLimits{64, 32, 1, 8, true}).goodput, 0.0);  // M0 > M_max
}

}  // namespace
}  // namespace pollux

// The memoised speedup function.
#include <gtest/gtest.h>

#include <stdexcept>

#include "pollux/speedup.h"

namespace pollux {
namespace {

const PerfParams kPerf{0.02, 0.002, 0.10, 0.02, 0.03, 0.005, 2.0};
const BatchLimits kLimits{128, 4096, 16, 256, true};

TEST(Speedup, IsOneOnOneGpuAndZeroOnNone) {
  const SpeedupFunction f(GoodputModel(kPerf, GradStats{0.5, 5.0}, 128), kLimits);
  EXPECT_DOUBLE_EQ(f(1, 1), 1.0);
  EXPECT_EQ(f(1, 0), 0.0);
  EXPECT_EQ(f(0, 4), 0.0);
}

TEST(Speedup, EqualsTheGoodputRatioInsideAndOutsideTheMemo) {
  const GoodputModel model(kPerf, GradStats{0.5, 5.0}, 128);
  const SpeedupFunction f(model, kLimits, 8);
  const double base = model.optimize(1, 1, kLimits).goodput;
  for (int r = 1; r <= 16; ++r)
    for (int n = 1; n <= std::min(r, 4); ++n) {
      const double want = model.optimize(n, r, kLimits).goodput / base;
      EXPECT_DOUBLE_EQ(f(n, r), want) << n << "x" << r;
      EXPECT_DOUBLE_EQ(f(n, r), want) << "memoised " << n << "x" << r;
    }
}

TEST(Speedup, NoisyJobsScaleBetterThanCleanOnes) {
  const SpeedupFunction noisy(GoodputModel(kPerf, GradStats{0.01, 50.0}, 128), kLimits);
  const SpeedupFunction clean(GoodputModel(kPerf, GradStats{50.0, 0.01}, 128), kLimits);
  EXPECT_GT(noisy(2, 8), clean(2, 8));
  EXPECT_GT(noisy(1, 4), 1.5);
  // Inter-node sync is slower than intra-node sync at the same size.
  EXPECT_GT(noisy(1, 4), noisy(2, 4));
}

TEST(Speedup, RejectsBadLimits) {
  const GoodputModel model(kPerf, GradStats{1, 1}, 128);
  EXPECT_THROW(SpeedupFunction(model, BatchLimits{128, 64, 16, 256, true}), std::invalid_argument);
  // No valid one-GPU configuration: M0 above m_max without accumulation.
  EXPECT_THROW(SpeedupFunction(model, BatchLimits{128, 4096, 16, 64, false}), std::invalid_argument);
}

}  // namespace
}  // namespace pollux

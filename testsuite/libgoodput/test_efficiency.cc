// Statistical efficiency and the AdaScale gain.
#include <gtest/gtest.h>

#include <cmath>

#include "pollux/efficiency.h"

namespace pollux {
namespace {

TEST(Efficiency, IsOneAtInitialBatch) {
  for (double var : {1e-6, 0.1, 1.0, 50.0})
    for (double sqr : {0.0, 0.01, 1.0}) {
      const GradStats g{sqr, var};
      EXPECT_DOUBLE_EQ(statistical_efficiency(g, 128, 128), 1.0) << sqr << " " << var;
      EXPECT_DOUBLE_EQ(adascale_gain(g, 128, 128), 1.0);
    }
}

TEST(Efficiency, DecreasesWithBatchAndGainStaysInRange) {
  const GradStats g{0.5, 4.0};
  const double m0 = 64;
  double prev = 1.0;
  for (double m = 2 * m0; m <= 64 * m0; m *= 2) {
    const double e = statistical_efficiency(g, m, m0);
    const double gain = adascale_gain(g, m, m0);
    EXPECT_LT(e, prev) << "batch " << m;
    EXPECT_GT(e, 0.0);
    EXPECT_GE(gain, 1.0);
    EXPECT_LE(gain, m / m0 + 1e-12);
    prev = e;
  }
}

TEST(Efficiency, MatchesNoiseScaleForm) {
  // E(M) = (B_noise + M0) / (B_noise + M), B_noise = var / sqr * M0.
  const GradStats g{0.25, 3.0};
  const double m0 = 32, bnoise = gradient_noise_scale(g, m0);
  EXPECT_DOUBLE_EQ(bnoise, 3.0 / 0.25 * 32);
  for (double m : {32.0, 100.0, 1000.0, 1e5})
    EXPECT_NEAR(statistical_efficiency(g, m, m0), (bnoise + m0) / (bnoise + m), 1e-12);
}

TEST(Efficiency, NoSignalMeansLinearSlowdownAndZeroVarMeansNoGain) {
  // Pure noise (sqr = 0): gain = scale, efficiency 1 (perfect scaling).
  EXPECT_DOUBLE_EQ(adascale_gain(GradStats{0.0, 2.0}, 400, 100), 4.0);
  // Pure signal (var = 0): a larger batch buys nothing.
  EXPECT_DOUBLE_EQ(adascale_gain(GradStats{1.0, 0.0}, 400, 100), 1.0);
  EXPECT_DOUBLE_EQ(statistical_efficiency(GradStats{1.0, 0.0}, 400, 100), 0.25);
  // Degenerate statistics: gain falls back to 1.
  EXPECT_DOUBLE_EQ(adascale_gain(GradStats{0.0, 0.0}, 400, 100), 1.0);
  EXPECT_TRUE(std::isinf(gradient_noise_scale(GradStats{0.0, 1.0}, 100)));
}

}  // namespace
}  // namespace pollux

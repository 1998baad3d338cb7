// SPDX-License-Identifier: GPL-2.0-or-later
// The search for the largest size a limit allows, and the rule for running
// jobs (sched/size_limits.h).
#include "sched/size_limits.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace pollux::sched {
namespace {

TEST(SizeLimits, LargestAllowedFindsTheEdgeOfAMonotoneTest) {
  for (int edge = 0; edge <= 17; ++edge) {
    int calls = 0;
    const int got = largest_allowed(1, 16, [&](int n) {
      ++calls;
      return n <= edge;
    });
    EXPECT_EQ(got, edge == 0 ? 0 : std::min(edge, 16)) << edge;
    EXPECT_LE(calls, 5) << edge;  // log2(16) + 1
  }
  EXPECT_EQ(largest_allowed(3, 2, [](int) { return true; }), 2);  // empty range: lo - 1
  EXPECT_EQ(largest_allowed(4, 4, [](int) { return false; }), 3);
}

TEST(SizeLimits, ARunningJobKeepsWhatItHoldsAndGrowsOnlyWhereTheLimitsAllow) {
  // What it holds, and less, stays allowed whatever the test says.
  EXPECT_TRUE(running_size_allowed(4, 4, FullTest::kPerJob, false));
  EXPECT_TRUE(running_size_allowed(2, 4, FullTest::kUsage, false));
  // More: the full size passes.
  EXPECT_TRUE(running_size_allowed(6, 4, FullTest::kPass, false));
  // A per-job limit refuses the full size: no growth, whatever the usage.
  EXPECT_FALSE(running_size_allowed(6, 4, FullTest::kPerJob, true));
  // A usage limit refused it (its usage counts the job's own GPUs): the
  // growth alone decides.
  EXPECT_TRUE(running_size_allowed(6, 4, FullTest::kUsage, true));
  EXPECT_FALSE(running_size_allowed(6, 4, FullTest::kUsage, false));
}

}  // namespace
}  // namespace pollux::sched

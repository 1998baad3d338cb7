// The profile: medians over a window, capacity, maturity.
#include <gtest/gtest.h>

#include "profile_table.h"

namespace pollux::agent_detail {
namespace {

TEST(ProfileTable, ReportsMediansSoThatStragglersDoNotCount) {
  ProfileTable t(8);
  for (int i = 0; i < 20; ++i) t.add(1, 2, 32, 0.010, 0.012, 5);
  t.add(1, 2, 32, 0.5, 3.0, 5);  // one preempted step
  const auto s = t.samples();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].grad_time, 0.010);
  EXPECT_DOUBLE_EQ(s[0].step_time, 0.012);
  EXPECT_EQ(s[0].replicas, 2);
  EXPECT_EQ(s[0].atomic_batch, 32);
}

TEST(ProfileTable, FollowsTheLastWindowOfSteps) {
  ProfileTable t(8);
  for (int i = 0; i < 100; ++i) t.add(1, 1, 8, 0.001, 0.002, 5);
  for (std::size_t i = 0; i < ProfileEntry::kWindow; ++i) t.add(1, 1, 8, 0.003, 0.004, 5);
  EXPECT_DOUBLE_EQ(t.samples()[0].step_time, 0.004);
  EXPECT_EQ(t.entries()[0].steps, 100 + static_cast<long long>(ProfileEntry::kWindow));
}

TEST(ProfileTable, SignalsMaturityOnce) {
  ProfileTable t(8);
  int signals = 0;
  for (int i = 0; i < 12; ++i) signals += t.add(1, 4, 16, 0.01, 0.02, 5);
  EXPECT_EQ(signals, 1);
}

TEST(ProfileTable, EvictsTheLeastMeasuredConfiguration) {
  ProfileTable t(2);
  for (int i = 0; i < 3; ++i) t.add(1, 1, 8, 0.01, 0.01, 5);
  t.add(1, 1, 16, 0.01, 0.01, 5);
  t.add(1, 1, 32, 0.01, 0.01, 5);  // evicts atomic 16 (1 step)
  ASSERT_EQ(t.entries().size(), 2u);
  EXPECT_EQ(t.entries()[0].atomic_batch, 8);
  EXPECT_EQ(t.entries()[1].atomic_batch, 32);
  EXPECT_EQ(t.max_replicas(), 1);
}

TEST(ProfileTable, IgnoresNonPositiveTimes) {
  ProfileTable t(2);
  EXPECT_FALSE(t.add(1, 1, 8, 0.0, 0.01, 1));
  EXPECT_FALSE(t.add(1, 1, 8, 0.01, -1, 1));
  EXPECT_TRUE(t.samples().empty());
}

}  // namespace
}  // namespace pollux::agent_detail

// The sizes Slurm refused, remembered across rounds (refused_sizes.h).
#include <gtest/gtest.h>

#include "sched/refused_sizes.h"

namespace pollux::sched {
namespace {

Snapshot one_job(const std::string& limits_key = "p1") {
  Snapshot snap;
  ElasticJobSnapshot j;
  j.job_id = 7;
  j.range = {1, 4, 4};
  j.limits_key = limits_key;
  snap.jobs.push_back(j);
  return snap;
}

TEST(RefusedSizes, ASizeFoundImpossibleIsRefusedUntilTheLimitsChange) {
  RefusedSizes r;
  Snapshot snap = one_job();
  snap.jobs[0].refused_now = Size{2, 4};
  const auto lines = r.apply(snap);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "JobId=7: Slurm found 2x4 GPUs impossible (BadConstraints); never given this size again until its "
            "partition, limits or range change");
  EXPECT_EQ(snap.jobs[0].refused, (std::vector<Size>{{2, 4}}));
  Snapshot again = one_job();
  again.jobs[0].refused_now = Size{2, 4};
  EXPECT_TRUE(r.apply(again).empty()) << "said once";
  EXPECT_EQ(again.jobs[0].refused, (std::vector<Size>{{2, 4}}));
  Snapshot changed = one_job("p2");
  EXPECT_TRUE(r.apply(changed).empty());
  EXPECT_TRUE(changed.jobs[0].refused.empty()) << "its limits changed";
}

TEST(RefusedSizes, EachRefusalIsLoggedOncePerReasonAndForgottenWhenTheJobEnds) {
  RefusedSizes r;
  Snapshot snap = one_job();
  r.apply(snap);
  EXPECT_EQ(r.refused(snap.jobs[0], {2, 4}, "PartitionNodeLimit", "message 1"), "message 1");
  EXPECT_EQ(r.refused(snap.jobs[0], {1, 4}, "PartitionNodeLimit", "message 2"), "");
  EXPECT_EQ(r.refused(snap.jobs[0], {1, 3}, "QOSMaxGRESPerJob", "message 3"), "message 3");
  Snapshot next = one_job();
  r.apply(next);
  EXPECT_EQ(next.jobs[0].refused, (std::vector<Size>{{2, 4}, {1, 4}, {1, 3}}));
  Snapshot empty;
  r.apply(empty);  // the job ended
  Snapshot back = one_job();
  r.apply(back);
  EXPECT_TRUE(back.jobs[0].refused.empty());
}

TEST(RefusedSizes, AJobSlurmAllowsNoSizeIsLoggedOncePerReason) {
  RefusedSizes r;
  Snapshot snap = one_job();
  snap.jobs[0].no_size = "PartitionTimeLimit";
  ASSERT_EQ(r.apply(snap).size(), 1u);
  EXPECT_EQ(r.apply(snap).size(), 0u);
  snap.jobs[0].no_size = "QOSMaxNodePerJobLimit";
  const auto lines = r.apply(snap);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "JobId=7: Slurm allows it no size of its range 1-4x4 (QOSMaxNodePerJobLimit): no GPUs until "
                      "its partition, limits or range change");
}

}  // namespace
}  // namespace pollux::sched

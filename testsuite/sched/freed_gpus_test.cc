// When a job's end frees GPUs, the periodic round is brought forward
// (freed_gpus.h): an elastic job that held GPUs ended, or rigid jobs hold
// fewer GPUs; never twice for one ended job, never for a job that ended
// waiting or for GPUs rigid jobs take.
#include <gtest/gtest.h>

#include "sched/freed_gpus.h"
#include "sched_test_util.h"

namespace pollux::sched {
namespace {

Snapshot cluster(int rigid_on_n1) {
  Snapshot s;
  s.nodes = test::four_nodes();
  s.nodes[0].rigid_gpus = rigid_on_n1;
  return s;
}

TEST(FreedGpus, ElasticJobThatHeldGpusEndedOnce) {
  FreedGpus f;
  Snapshot s = cluster(0);
  EXPECT_FALSE(f.seen(s));
  s.ended.push_back({7, "pollux: ...", 4});
  EXPECT_TRUE(f.seen(s));
  // Still listed at the next round (its SystemComment not yet brought up
  // to date): not freed again.
  EXPECT_FALSE(f.seen(s));
  s.ended.push_back({8, "pollux: ...", 2});
  EXPECT_TRUE(f.seen(s));
}

TEST(FreedGpus, JobThatEndedWaitingFreesNothing) {
  FreedGpus f;
  Snapshot s = cluster(0);
  s.ended.push_back({7, "pollux: ...", 0});
  EXPECT_FALSE(f.seen(s));
}

TEST(FreedGpus, RigidJobsHoldingFewerGpus) {
  FreedGpus f;
  EXPECT_FALSE(f.seen(cluster(4)));  // the first round compares with nothing
  EXPECT_FALSE(f.seen(cluster(4)));
  EXPECT_TRUE(f.seen(cluster(2)));   // a rigid job ended (or finished completing)
  EXPECT_FALSE(f.seen(cluster(2)));
  EXPECT_FALSE(f.seen(cluster(3)));  // a rigid job started: nothing freed
  EXPECT_EQ(rigid_gpus_held(cluster(3)), 3);
}

}  // namespace
}  // namespace pollux::sched

// libgoodput's goodput auto-scaling rule (pollux/autoscale.h): the
// cluster's utility and the size its band asks for.
#include <gtest/gtest.h>

#include "pollux/autoscale.h"

namespace pollux {
namespace {

JobInfo job(SpeedupFn f, int max_replicas) {
  JobInfo j;
  j.speedup = std::move(f);
  j.max_replicas = max_replicas;
  return j;
}

// Speedup 1 on any GPUs: a job that gains nothing from a second GPU.
SpeedupFn flat() {
  return [](int, int r) { return r > 0 ? 1.0 : 0.0; };
}

TEST(GoodputScaling, UtilityIsTheSummedSpeedupOverThePaidGpus) {
  const std::vector<JobInfo> jobs = {job({}, 64), job(flat(), 64)};
  const std::vector<Placement> alloc = {{{0, 4}}, {{1, 2}}};
  EXPECT_DOUBLE_EQ(cluster_utility(jobs, alloc, 16), 5.0 / 16);  // linear 4 + flat 1
  EXPECT_DOUBLE_EQ(cluster_utility(jobs, alloc, 0), 0.0);
}

TEST(GoodputScaling, TheBandGrowsAndShrinksTheCluster) {
  const UtilityBand o;
  // Jobs that scale linearly (no model yet) keep the utility at 1: grow to the limit.
  EXPECT_EQ(desired_nodes({job({}, 64), job({}, 64)}, 1, 16, 4, o), 16);
  // Four jobs that gain nothing beyond one GPU: utility 4 / (4 N), 0.5 at N = 2.
  const std::vector<JobInfo> four(4, job(flat(), 64));
  EXPECT_EQ(desired_nodes(four, 16, 16, 4, o), 2);  // 1/16: shrink
  EXPECT_EQ(desired_nodes(four, 1, 16, 4, o), 2);   // 1: grow
  // Within the band the size stays, though another is nearer 0.5: five
  // flat jobs, 5/8 on 2 nodes (in), 5/12 on 3 (nearer).
  const std::vector<JobInfo> five(5, job(flat(), 64));
  EXPECT_EQ(desired_nodes(five, 2, 16, 4, o), 2);
  EXPECT_EQ(desired_nodes(five, 1, 16, 4, o), 3);
  // A job's max_replicas bounds what it can use: 8 GPUs are worth 2 of 4 nodes.
  EXPECT_EQ(desired_nodes({job({}, 8)}, 1, 16, 4, o), 4);
  EXPECT_EQ(desired_nodes({}, 3, 16, 4, o), 0);  // nothing to run: nothing to pay
}

TEST(GoodputScaling, ADipAtANodeBoundaryIsCrossed) {
  // Linear on one node; across nodes 0.75 per GPU: 5 GPUs (3.75) are worse
  // than 4, 8 GPUs (6) better. On 2 nodes the utility is 6/8 (out of the
  // band), not 4/8: the rule goes to 3 nodes (6/12).
  const SpeedupFn dip = [](int nodes, int r) { return nodes == 1 ? r : 0.75 * r; };
  EXPECT_EQ(desired_nodes({job(dip, 8)}, 2, 16, 4, UtilityBand{}), 3);
}

TEST(GoodputScaling, AJobThatMustSpanNodesIsWorthItsSpeedupThere) {
  // Two jobs of exactly 2 GPUs on at least 2 nodes, linear there and 0 on
  // one node (a distributed minimum): 4 GPUs of speedup 1 each. Packed on
  // one node they were worth nothing, every size's utility 0, and the band
  // asked for all 16 nodes; at 2 nodes of 4 GPUs the utility is 4/8.
  const SpeedupFn spread = [](int nodes, int r) { return nodes >= 2 ? double(r) : 0.0; };
  JobInfo j = job(spread, 2);
  j.min_replicas = 2;
  j.min_nodes = 2;
  EXPECT_EQ(desired_nodes({j, j}, 16, 16, 4, UtilityBand{}), 2);
}

TEST(GoodputScaling, RunningJobsKeepTheNodesTheirMinimumsNeed) {
  // Twelve running jobs that gain nothing beyond one GPU: at 1 GPU each
  // they fit on 3 nodes of 4 GPUs. Nine of them at 2 GPUs minimum and
  // three at 1 (21 GPUs): first-fit decreasing, 6 nodes.
  const UtilityBand o;
  std::vector<JobInfo> jobs(12, job(flat(), 64));
  std::vector<Placement> alloc(12, Placement{{0, 1}});
  EXPECT_EQ(nodes_to_keep_running(jobs, alloc, 4), 3);
  for (int j = 0; j < 9; ++j) jobs[j].min_replicas = 2;
  EXPECT_EQ(nodes_to_keep_running(jobs, alloc, 4), 6);
  // Jobs without GPUs (waiting) need nothing kept.
  std::vector<Placement> some(12);
  some[0] = {{0, 2}};
  EXPECT_EQ(nodes_to_keep_running(jobs, some, 4), 1);
  // A minimum over two nodes takes them whole; over one node's GPUs, whole nodes.
  JobInfo wide = job(flat(), 64);
  wide.min_nodes = 2;
  JobInfo big = job(flat(), 64);
  big.min_replicas = 6;
  EXPECT_EQ(nodes_to_keep_running({wide, big}, {{{0, 1}, {1, 1}}, {{2, 4}, {3, 2}}}, 4), 4);
  // The target: the band's 2 nodes for four flat jobs, unless their
  // minimums need more; never beyond the cluster.
  const std::vector<JobInfo> four(4, job(flat(), 64));
  const std::vector<Placement> running(4, Placement{{0, 1}});
  EXPECT_EQ(autoscale_target(four, running, 4, 16, 4, o).nodes, 2);
  std::vector<JobInfo> four_big = four;
  for (JobInfo& j : four_big) j.min_replicas = 3;
  EXPECT_EQ(autoscale_target(four_big, running, 4, 16, 4, o).nodes, 4);
  EXPECT_EQ(autoscale_target(four_big, running, 4, 3, 4, o).nodes, 3);
  EXPECT_EQ(autoscale_target(four_big, std::vector<Placement>(4), 4, 16, 4, o).nodes, desired_nodes(four_big, 4, 16, 4, o));
}

}  // namespace
}  // namespace pollux

// The paper's baselines: Tiresias (two-queue LAS) and Optimus+Oracle
// (marginal gain of iteration time x remaining iterations).
#include <gtest/gtest.h>

#include <map>

#include "pollux/policy.h"

namespace pollux {
namespace {

JobInfo tjob(std::uint64_t id, double submit, int requested, double attained = 0) {
  JobInfo j;
  j.id = id;
  j.submit_time = submit;
  j.requested_gpus = requested;
  j.max_replicas = requested;
  j.attained_service = attained;
  j.age = 100;
  return j;
}

std::vector<Placement> run(const char* name, const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                           const std::vector<Placement>& current, PolicyOptions o = {}) {
  const auto alloc = make_policy(name, o)->optimize(jobs, nodes, current, 0);
  o.interference_avoidance = false;  // not a constraint of the baselines
  o.max_nodes_per_job = 1 << 20;
  const auto err = check_allocation(jobs, nodes, alloc, o);
  EXPECT_FALSE(err) << *err;
  return alloc;
}

PolicyOptions threshold(double gpu_seconds) {
  PolicyOptions o;
  o.tiresias_queue_threshold = gpu_seconds;
  return o;
}

TEST(Tiresias, DemotesAtTheThreshold) {
  const std::vector<NodeInfo> nodes{{4}};
  // Job 1 came first but has attained exactly the threshold: queue 1.
  std::vector<JobInfo> jobs{tjob(1, 0, 4, 100.0), tjob(2, 10, 4, 99.9)};
  auto alloc = run("tiresias", jobs, nodes, {{}, {}}, threshold(100));
  EXPECT_TRUE(alloc[0].empty());
  EXPECT_EQ(alloc[1], (Placement{{0, 4}}));
  // Below the threshold both are in queue 0: FIFO.
  jobs[0].attained_service = 99.0;
  alloc = run("tiresias", jobs, nodes, {{}, {}}, threshold(100));
  EXPECT_EQ(alloc[0], (Placement{{0, 4}}));
  EXPECT_TRUE(alloc[1].empty());
  // The default threshold is 16 GPU-hours.
  EXPECT_EQ(PolicyOptions{}.tiresias_queue_threshold, 16 * 3600.0);
}

TEST(Tiresias, QueueZeroPreemptsQueueOneAndSmallerJobsBackfill) {
  const std::vector<NodeInfo> nodes{{4}, {4}};
  const std::vector<JobInfo> jobs{
      tjob(1, 0, 8, 1e6),   // queue 1, running on everything
      tjob(2, 50, 4, 0),    // new, queue 0
      tjob(3, 60, 6, 0),    // queue 0, does not fit after job 2
      tjob(4, 70, 2, 5e5),  // queue 1, small: runs in what is left
  };
  const std::vector<Placement> current{{{0, 4}, {1, 4}}, {}, {}, {}};
  const auto alloc = run("tiresias", jobs, nodes, current, threshold(1000));
  EXPECT_TRUE(alloc[0].empty());  // preempted
  EXPECT_EQ(placement_gpus(alloc[1]), 4);
  EXPECT_TRUE(alloc[2].empty());
  EXPECT_EQ(placement_gpus(alloc[3]), 2);
  // Placed on whole nodes: the most free GPUs first.
  EXPECT_EQ(alloc[1].size(), 1u);
  EXPECT_EQ(alloc[3].size(), 1u);
}

TEST(Tiresias, RunsExactlyTheRequestedSizeAndKeepsPlacements) {
  const std::vector<NodeInfo> nodes{{4}, {4}, {4}};
  const std::vector<JobInfo> jobs{tjob(1, 0, 3), tjob(2, 1, 5), tjob(3, 2, 1), tjob(4, 3, 4)};
  const std::vector<Placement> current{{{1, 3}}, {}, {{2, 1}}, {}};
  const auto alloc = run("tiresias", jobs, nodes, current);
  EXPECT_EQ(alloc[0], current[0]);
  EXPECT_EQ(alloc[2], current[2]);
  EXPECT_EQ(placement_gpus(alloc[1]), 5);
  EXPECT_TRUE(alloc[3].empty());  // 3 + 5 + 1 = 9 of 12: 4 more do not fit
}

TEST(Tiresias, UniformGpusPerNode) {
  const std::vector<NodeInfo> nodes{{4}, {4}, {4}};
  PolicyOptions o;
  o.uniform_gpus_per_node = true;
  const auto alloc = run("tiresias", {tjob(1, 0, 6), tjob(2, 1, 5)}, nodes, {{}, {}}, o);
  EXPECT_EQ(alloc[0], (Placement{{0, 3}, {1, 3}}));
  EXPECT_TRUE(alloc[1].empty());  // 5 cannot be split evenly over the rest
}

// Optimus: iteration time t(R) = serial + parallel / R.
JobInfo ojob(std::uint64_t id, double submit, double serial, double parallel, double remaining, int max_replicas) {
  JobInfo j;
  j.id = id;
  j.submit_time = submit;
  j.max_replicas = max_replicas;
  j.remaining_iterations = remaining;
  j.iteration_time = [serial, parallel](int r) { return serial + parallel / r; };
  j.age = 100;
  return j;
}

TEST(Optimus, HandsOutGpusByMarginalGain) {
  const std::vector<NodeInfo> nodes{{4}, {4}};
  const std::vector<JobInfo> jobs{
      ojob(1, 0, 0.0, 100.0, 10, 8),  // gains 500, 167, 83, 50, ...
      ojob(2, 1, 0.0, 100.0, 30, 3),  // gains 1500, 500, then capped at 3
      ojob(3, 2, 10.0, 90.0, 10, 8),  // gains 450, 150, 75, ...
  };
  const auto alloc = run("optimus", jobs, nodes, {{}, {}, {}});
  // One each (3 GPUs), then by gain: job 2 (1500), job 1 (500, earlier
  // than job 2's 500), job 2 (500, now at its cap), job 3 (450), job 1
  // (167 against job 3's 150).
  EXPECT_EQ(placement_gpus(alloc[0]), 3);
  EXPECT_EQ(placement_gpus(alloc[1]), 3);
  EXPECT_EQ(placement_gpus(alloc[2]), 2);
}

TEST(Optimus, RespectsMaxReplicasAndStopsWithoutGain) {
  const std::vector<NodeInfo> nodes{{4}, {4}};
  const std::vector<JobInfo> jobs{ojob(1, 0, 0.0, 100.0, 10, 2), ojob(2, 1, 5.0, 0.0, 10, 8)};
  const auto alloc = run("optimus", jobs, nodes, {{}, {}});
  EXPECT_EQ(placement_gpus(alloc[0]), 2);  // capped
  EXPECT_EQ(placement_gpus(alloc[1]), 1);  // no speedup: no second GPU
}

TEST(Optimus, FirstGpusGoInFifoOrderAndPlacementsAreKept) {
  const std::vector<NodeInfo> nodes{{2}, {2}};
  std::vector<JobInfo> jobs;
  for (std::uint64_t i = 0; i < 6; ++i) jobs.push_back(ojob(10 - i, double(i), 0, 10, 1, 4));
  const std::vector<Placement> current{{{1, 1}}, {}, {}, {}, {}, {}};
  const auto alloc = run("optimus", jobs, nodes, current);
  for (std::size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(placement_gpus(alloc[i]), i < 4 ? 1 : 0) << i;
  EXPECT_EQ(alloc[0], current[0]);
}

TEST(Optimus, JobsWithoutTimesKeepOneGpu) {
  const std::vector<NodeInfo> nodes{{4}};
  JobInfo j = ojob(1, 0, 0, 100, 10, 4);
  j.iteration_time = nullptr;
  const auto alloc = run("optimus", {j}, nodes, {{}});
  EXPECT_EQ(placement_gpus(alloc[0]), 1);
}

}  // namespace
}  // namespace pollux

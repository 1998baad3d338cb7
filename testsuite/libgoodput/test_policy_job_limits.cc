// Per-job limits a cluster scheduler imposes (JobInfo::allowed_nodes,
// max_nodes and min_nodes: a job's partition, excluded nodes, the
// partition's MaxNodes and MinNodes):
// check_allocation names a breach, and Pollux, with either search, never
// places a job outside them, even where that leaves GPUs idle or where the
// job runs now.
#include <gtest/gtest.h>

#include <random>

#include "pollux/policy.h"

namespace pollux {
namespace {

JobInfo job(std::uint64_t id, int max_replicas) {
  JobInfo j;
  j.id = id;
  j.max_replicas = max_replicas;
  j.min_replicas = 1;
  j.age = 1000;
  j.requested_gpus = max_replicas;
  return j;
}

TEST(JobLimits, CheckAllocationNamesThem) {
  const std::vector<NodeInfo> nodes{{4}, {4}, {4}};
  JobInfo j = job(1, 12);
  j.allowed_nodes = {false, true, true};
  EXPECT_FALSE(check_allocation({j}, nodes, {{{1, 4}, {2, 4}}}, {}));
  EXPECT_NE(check_allocation({j}, nodes, {{{0, 4}}}, {}).value_or("").find("may not use"), std::string::npos);
  j.allowed_nodes.clear();
  j.max_nodes = 2;
  EXPECT_NE(check_allocation({j}, nodes, {{{0, 4}, {1, 4}, {2, 4}}}, {}).value_or("").find("its max_nodes 2"),
            std::string::npos);
}

TEST(JobLimits, CheckAllocationNamesMinNodes) {
  const std::vector<NodeInfo> nodes{{4}, {4}, {4}};
  JobInfo j = job(1, 12);
  j.min_nodes = 2;
  EXPECT_FALSE(check_allocation({j}, nodes, {{{1, 4}, {2, 4}}}, {}));
  EXPECT_FALSE(check_allocation({j}, nodes, {{}}, {}));  // no GPUs at all is fine
  EXPECT_NE(check_allocation({j}, nodes, {{{0, 4}}}, {}).value_or("").find("fewer than its min_nodes 2"),
            std::string::npos);
}

TEST(JobLimits, PolluxNeverRunsAJobOnFewerThanItsMinNodes) {
  // Job 1 needs at least 3 nodes; job 2 (any size) competes for them. On 4
  // nodes of 4 GPUs, with and without uniform GPUs per node, each search
  // gives job 1 no GPUs or >= 3 nodes, also when it runs on 1 node now.
  const std::vector<NodeInfo> nodes{{4}, {4}, {4}, {4}};
  JobInfo a = job(1, 16), b = job(2, 16);
  a.min_nodes = 3;
  for (SearchKind kind : {SearchKind::kLocal, SearchKind::kGenetic})
    for (bool uniform : {false, true})
      for (const Placement& now : {Placement{}, Placement{{0, 4}}}) {
        SCOPED_TRACE(std::string(kind == SearchKind::kLocal ? "local" : "genetic") + (uniform ? " uniform" : ""));
        PolicyOptions o;
        o.search = kind;
        o.interference_avoidance = false;
        o.uniform_gpus_per_node = uniform;
        const auto alloc = make_policy("pollux", o)->optimize({a, b}, nodes, {now, {}}, 0);
        const auto err = check_allocation({a, b}, nodes, alloc, o);
        EXPECT_FALSE(err) << *err;
        EXPECT_TRUE(alloc[0].empty() || alloc[0].size() >= 3u);
        // Alone it runs (on >= 3 nodes): the bound does not leave it idle.
        const auto solo = make_policy("pollux", o)->optimize({a}, nodes, {now}, 0);
        EXPECT_FALSE(check_allocation({a}, nodes, solo, o));
        EXPECT_GE(solo[0].size(), 3u);
      }
  // A min_nodes it can never meet (above max_nodes): never runs.
  a.max_nodes = 2;
  EXPECT_TRUE(make_policy("pollux", {})->optimize({a}, nodes, {{}}, 0)[0].empty());
}

TEST(JobLimits, InconsistentLimitsAreRejected) {
  JobInfo j = job(1, 4);
  j.allowed_nodes = {true};
  EXPECT_THROW(make_policy("pollux", {})->optimize({j}, {{4}, {4}}, {{}}, 0), std::invalid_argument);
  j.allowed_nodes.clear();
  j.max_nodes = -1;
  EXPECT_THROW(make_policy("pollux", {})->optimize({j}, {{4}, {4}}, {{}}, 0), std::invalid_argument);
  j.max_nodes = 0;
  j.min_nodes = -1;
  EXPECT_THROW(make_policy("pollux", {})->optimize({j}, {{4}, {4}}, {{}}, 0), std::invalid_argument);
}

TEST(JobLimits, PolluxKeepsEachJobWithinItsNodesAndNodeCount) {
  // Job 1 may use only nodes 2-3 (a partition) and runs now on node 0;
  // job 2 may span at most 2 nodes (MaxNodes=2) though it could use all 4.
  const std::vector<NodeInfo> nodes{{4}, {4}, {4}, {4}};
  JobInfo a = job(1, 16), b = job(2, 16);
  a.allowed_nodes = {false, false, true, true};
  b.max_nodes = 2;
  for (SearchKind kind : {SearchKind::kLocal, SearchKind::kGenetic}) {
    SCOPED_TRACE(kind == SearchKind::kLocal ? "local" : "genetic");
    PolicyOptions o;
    o.search = kind;
    o.interference_avoidance = false;
    o.uniform_gpus_per_node = true;
    const auto alloc = make_policy("pollux", o)->optimize({a, b}, nodes, {{{0, 4}}, {}}, 0);
    const auto err = check_allocation({a, b}, nodes, alloc, o);
    EXPECT_FALSE(err) << *err;
    for (const NodeShare& s : alloc[0]) EXPECT_GE(s.node, 2);
    EXPECT_FALSE(alloc[0].empty());  // it runs, where it may
    EXPECT_LE(alloc[1].size(), 2u);
    EXPECT_FALSE(alloc[1].empty());
  }
}

TEST(JobLimits, RandomRoundsNeverBreakThem) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int n = 2 + static_cast<int>(rng() % 6), m = 1 + static_cast<int>(rng() % 6);
    std::vector<NodeInfo> nodes(n);
    for (NodeInfo& x : nodes) x.gpus = 1 + static_cast<int>(rng() % 4);
    std::vector<JobInfo> jobs;
    std::vector<Placement> current(m);
    for (int i = 0; i < m; ++i) {
      JobInfo j = job(i + 1, 1 + static_cast<int>(rng() % 12));
      if (rng() % 2) {
        j.allowed_nodes.resize(n);
        for (int k = 0; k < n; ++k) j.allowed_nodes[k] = rng() % 2;
      }
      if (rng() % 2) j.max_nodes = 1 + static_cast<int>(rng() % 3);
      if (rng() % 2) current[i] = {{static_cast<int>(rng() % n), 1}};
      jobs.push_back(j);
    }
    for (SearchKind kind : {SearchKind::kLocal, SearchKind::kGenetic}) {
      PolicyOptions o;
      o.search = kind;
      o.uniform_gpus_per_node = rng() % 2;
      o.population = 10;
      o.generations = 5;
      const auto alloc = make_policy("pollux", o)->optimize(jobs, nodes, current, 0);
      const auto err = check_allocation(jobs, nodes, alloc, o);
      ASSERT_FALSE(err) << "round " << round << ": " << *err;
    }
  }
}

}  // namespace
}  // namespace pollux

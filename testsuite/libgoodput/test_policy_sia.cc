// The Sia-like policy (pollux/sia_policy.h) on a small synthetic
// heterogeneous cluster. Each case is skipped in a build without GLPK.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "pollux/sia_policy.h"

namespace pollux {
namespace {

// Type 0: 2 nodes x 4 GPUs; type 1: 1 node x 8 GPUs.
std::vector<NodeInfo> two_types() { return {{4, 0}, {4, 0}, {8, 1}}; }

// Job i scales as r^0.9 on both types, and is `fast` times as fast on type 1.
JobInfo job(std::uint64_t id, double fast, int max_replicas, double age = 600) {
  JobInfo j;
  j.id = id;
  j.age = age;
  j.max_replicas = max_replicas;
  j.speedup_by_type = {[](int, int r) { return 0.3 * std::pow(r, 0.9); },
                       [fast](int, int r) { return 0.3 * fast * std::pow(r, 0.9); }};
  return j;
}

// Every placement is on one type, a Sia configuration (a power of two
// below the node size on one node, or whole nodes), within capacity.
void expect_valid(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                  const std::vector<Placement>& out) {
  ASSERT_EQ(out.size(), jobs.size());
  std::vector<int> used(nodes.size(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].empty()) continue;
    const int type = nodes[static_cast<std::size_t>(out[i].front().node)].type;
    const int gpn = type == 0 ? 4 : 8;
    int gpus = 0;
    for (const NodeShare& s : out[i]) {
      EXPECT_EQ(nodes[static_cast<std::size_t>(s.node)].type, type) << "job " << i << " spans two types";
      used[static_cast<std::size_t>(s.node)] += s.gpus;
      gpus += s.gpus;
      if (out[i].size() > 1) EXPECT_EQ(s.gpus, gpn) << "job " << i << ": a multi-node configuration takes whole nodes";
    }
    EXPECT_LE(gpus, jobs[i].max_replicas);
    if (out[i].size() == 1 && gpus < gpn) EXPECT_EQ(gpus & (gpus - 1), 0) << "job " << i << ": " << gpus << " GPUs";
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) EXPECT_LE(used[n], nodes[n].gpus) << "node " << n;
  PolicyOptions checked;
  checked.interference_avoidance = false;
  EXPECT_EQ(check_allocation(jobs, nodes, out, checked), std::nullopt);
}

PolicyOptions sia_options() {
  PolicyOptions o;
  o.fairness_p = kSiaDefaultP;
  return o;
}

TEST(SiaPolicy, OneTypePerJobWithinCapacity) {
  if (!SiaPolicy::available()) GTEST_SKIP() << "built without GLPK";
  SiaPolicy sia(sia_options());
  const std::vector<NodeInfo> nodes = two_types();
  // More demand than GPUs: 6 jobs that could each use 8.
  std::vector<JobInfo> jobs;
  for (std::uint64_t i = 0; i < 6; ++i) jobs.push_back(job(i, i < 2 ? 4.0 : 1.1, 8));
  const std::vector<Placement> out = sia.optimize(jobs, nodes, std::vector<Placement>(jobs.size()), 0);
  expect_valid(jobs, nodes, out);
  int running = 0;
  for (const Placement& p : out) running += !p.empty();
  EXPECT_EQ(running, 6) << "lambda_n > 1: every job gets GPUs while there are enough";
  // The two jobs that gain 4x on type 1 run there.
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_FALSE(out[i].empty());
    EXPECT_EQ(nodes[static_cast<std::size_t>(out[i].front().node)].type, 1) << "job " << i;
  }
}

TEST(SiaPolicy, AnUnchangedConfigurationKeepsItsGpus) {
  if (!SiaPolicy::available()) GTEST_SKIP() << "built without GLPK";
  SiaPolicy sia(sia_options());
  const std::vector<NodeInfo> nodes = two_types();
  std::vector<JobInfo> jobs = {job(0, 3.0, 4), job(1, 1.0, 2), job(2, 1.0, 1)};
  const std::vector<Placement> first = sia.optimize(jobs, nodes, std::vector<Placement>(jobs.size()), 0);
  expect_valid(jobs, nodes, first);
  for (JobInfo& j : jobs) j.restarts = 1;
  const std::vector<Placement> second = sia.optimize(jobs, nodes, first, 60);
  EXPECT_EQ(second, first);
}

TEST(SiaPolicy, AJobInTheMiddleOfARestartKeepsItsConfiguration) {
  if (!SiaPolicy::available()) GTEST_SKIP() << "built without GLPK";
  SiaPolicy sia(sia_options());
  const std::vector<NodeInfo> nodes = two_types();
  // Job 0 holds 2 GPUs of type 1; job 1 would gain 8x from all of type 1.
  std::vector<JobInfo> jobs = {job(0, 1.0, 2), job(1, 8.0, 8)};
  const std::vector<Placement> held = {{{2, 2}}, {}};
  jobs[0].restarting = true;
  const std::vector<Placement> out = sia.optimize(jobs, nodes, held, 0);
  expect_valid(jobs, nodes, out);
  EXPECT_EQ(out[0], held[0]);
}

// A job that holds 2 GPUs of type 0 and would run 3x as fast on type 1
// moves when a restart costs it the default 30 s, stays when its own
// restart_delay is 500 s (restart factor 0.09 at age 600), and moves again
// when it is told a per-model penalty of 30 s (Sia's own, which pollux-sim
// gives as the job's restart_delay with --sia-calibration).
TEST(SiaPolicy, AJobIsChargedItsOwnRestartDelay) {
  if (!SiaPolicy::available()) GTEST_SKIP() << "built without GLPK";
  SiaPolicy sia(sia_options());
  const std::vector<NodeInfo> nodes = two_types();
  std::vector<JobInfo> jobs = {job(0, 3.0, 2)};
  jobs[0].restarts = 1;
  const std::vector<Placement> held = {{{0, 2}}};
  const auto type_of = [&](const std::vector<Placement>& out) {
    return out[0].empty() ? -1 : nodes[static_cast<std::size_t>(out[0].front().node)].type;
  };
  EXPECT_EQ(type_of(sia.optimize(jobs, nodes, held, 0)), 1);
  jobs[0].restart_delay = 500;
  EXPECT_EQ(sia.optimize(jobs, nodes, held, 0), held);
  jobs[0].restart_delay = 30;
  EXPECT_EQ(type_of(sia.optimize(jobs, nodes, held, 0)), 1);
}

TEST(SiaPolicy, ANewJobIsGivenOneGpuAndANonPositivePIsRejected) {
  if (!SiaPolicy::available()) GTEST_SKIP() << "built without GLPK";
  SiaPolicy sia(sia_options());
  const std::vector<NodeInfo> nodes = two_types();
  const std::vector<JobInfo> jobs = {job(0, 2.0, 1, 0)};
  const std::vector<Placement> out = sia.optimize(jobs, nodes, {{}}, 0);
  expect_valid(jobs, nodes, out);
  ASSERT_EQ(out[0].size(), 1u);
  EXPECT_EQ(out[0][0].gpus, 1);
  PolicyOptions zero;
  zero.fairness_p = 0;
  EXPECT_THROW(SiaPolicy{zero}, std::invalid_argument);
}

}  // namespace
}  // namespace pollux

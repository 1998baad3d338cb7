// pollux-sim's cloud auto-scaling (sim/autoscaler.h): node states
// and what they cost, Slurm's power saving, and the simulation's use of
// them, goodput auto-scaling by sched/pollux's round (its own tests:
// testsuite/sched/autoscale_round_test.cc, and the utility band's
// testsuite/libgoodput/test_autoscale.cc).
#include <gtest/gtest.h>

#include <cmath>

#include "autoscaler.h"
#include "cluster_sim.h"
#include "sim_test_support.h"
#include "workload.h"

namespace pollux::sim {
namespace {

AutoscaleOptions mode(ScaleMode m, double boot = 100, double suspend = 300) {
  AutoscaleOptions o;
  o.mode = m;
  o.boot_delay = boot;
  o.suspend_time = suspend;
  return o;
}

TEST(NodePool, ABootingNodeIsPaidButNotUsableBeforeTheDelay) {
  NodePool pool(4, mode(ScaleMode::kGoodput, 100));
  EXPECT_EQ(pool.on_count(), 0);  // a cloud cluster starts at rest
  pool.boot(1, 10);
  EXPECT_TRUE(pool.on(1));
  EXPECT_FALSE(pool.up(1, 109));
  EXPECT_TRUE(pool.up(1, 110));
  EXPECT_EQ(pool.up_count(50), 0);
  EXPECT_DOUBLE_EQ(pool.wait(Placement{{1, 2}}, 50), 60);
  EXPECT_DOUBLE_EQ(pool.wait(Placement{{0, 1}}, 50), 100);  // down: a whole boot
  EXPECT_DOUBLE_EQ(pool.wait(Placement{{1, 2}}, 200), 0);
  pool.boot(1, 60);  // already on: its boot is not restarted
  EXPECT_TRUE(pool.up(1, 110));
}

TEST(NodePool, NodeHoursCountEveryNodeOnBootingOrUp) {
  NodePool fixed(4, mode(ScaleMode::kFixed));
  EXPECT_EQ(fixed.up_count(0), 4);
  fixed.pay(1800);
  EXPECT_DOUBLE_EQ(fixed.node_hours(), 2.0);

  NodePool pool(4, mode(ScaleMode::kGoodput, 600));
  pool.boot(0, 0);
  pool.boot(3, 0);
  pool.pay(3600);  // booting all along: paid
  pool.power_down(3);
  pool.pay(3600);
  EXPECT_DOUBLE_EQ(pool.node_hours(), 3.0);
}

TEST(NodePool, QueueModeBootsWhatIsPlacedAndSuspendsAfterSuspendTime) {
  NodePool pool(2, mode(ScaleMode::kQueue, 60, 300));
  pool.follow_allocation({2, 0}, 0);  // a job placed on node 0 resumes it
  EXPECT_TRUE(pool.on(0));
  EXPECT_FALSE(pool.on(1));
  pool.follow_allocation({2, 0}, 60);
  pool.follow_allocation({0, 0}, 120);  // idle since the round at 60
  pool.follow_allocation({0, 0}, 359);
  EXPECT_TRUE(pool.on(0));
  pool.follow_allocation({0, 0}, 360);
  EXPECT_FALSE(pool.on(0));
  // A node booted and never used is suspended SuspendTime after it is up.
  pool.follow_allocation({0, 1}, 400);
  pool.follow_allocation({0, 0}, 460);
  pool.follow_allocation({0, 0}, 759);
  EXPECT_TRUE(pool.on(1));
  pool.follow_allocation({0, 0}, 760);
  EXPECT_FALSE(pool.on(1));
}

TEST(NodePool, PowerStatesAreSchedPolluxsAndItsPlanIsApplied) {
  NodePool pool(3, mode(ScaleMode::kGoodput, 100));
  pool.apply({}, {0, 2}, 0);  // the round's plan: resume nodes 0 and 2
  EXPECT_EQ(pool.power(0, 50), sched::Power::kBooting);
  EXPECT_EQ(pool.power(1, 50), sched::Power::kOff);
  EXPECT_EQ(pool.power(2, 100), sched::Power::kOn);
  pool.apply({2}, {}, 150);  // power down node 2
  EXPECT_EQ(pool.power(2, 150), sched::Power::kOff);
  EXPECT_EQ(pool.on_count(), 1);
}

// Places every job on one GPU of the first offered node with a free GPU.
class FirstFreePolicy : public Policy {
 public:
  FirstFreePolicy() : Policy(PolicyOptions{}) {}
  std::string_view name() const noexcept override { return "first-free-test"; }
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current, double) override {
    std::vector<int> free;
    for (const NodeInfo& n : nodes) free.push_back(n.gpus);
    std::vector<Placement> out(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      if (!current[j].empty() && free[static_cast<std::size_t>(current[j][0].node)] > 0) {
        out[j] = current[j];
        --free[static_cast<std::size_t>(current[j][0].node)];
        continue;
      }
      for (std::size_t n = 0; n < free.size(); ++n)
        if (free[n] > 0) {
          out[j] = Placement{{static_cast<int>(n), 1}};
          --free[n];
          break;
        }
    }
    return out;
  }
};

Workload one_job(const std::string& name, const std::string& rows) {
  return read_workload(test::write_file(name, "name,time,application,num_replicas,batch_size\n" + rows),
                       test::catalog());
}

SimOptions scaled(ScaleMode m, double boot) {
  SimOptions o;
  o.policy = "pollux";  // what the jobs are told: their speedups
  o.nodes = 2;
  o.record_timeline = true;
  o.autoscale = mode(m, boot, 300);
  return o;
}

TEST(AutoscaledSim, GoodputResumesANodeAndTheJobWaitsForItsBoot) {
  // sched/pollux's round (pollux_autoscale=goodput) on a cluster at rest:
  // the job is placed on a powered-down node, which is resumed; it runs
  // once the node has booted, and the node is paid from its resume.
  const Workload w = one_job("boot.csv", "a,0,ncf,1,32768\n");
  FirstFreePolicy policy;
  const RunResult r = simulate(w, test::catalog(), scaled(ScaleMode::kGoodput, 600), policy);
  ASSERT_EQ(r.times.size(), r.nodes_up.size());
  for (std::size_t k = 0; k < r.times.size(); ++k) {
    // One node while the job runs (1 GPU: utility 1/4, nearest the band's
    // middle): the other is never resumed.
    EXPECT_EQ(r.nodes_on[k], 1) << "t=" << r.times[k];
    if (r.times[k] < 660) EXPECT_EQ(r.nodes_up[k], 0) << "t=" << r.times[k];
  }
  EXPECT_GT(r.gpus.front()[0], 0);  // placed at the first round, on the booting node
  EXPECT_GE(r.jobs[0].jct, 660);    // the first round (60 s) and the boot (600 s)
  const RunResult warm = simulate(w, test::catalog(), scaled(ScaleMode::kGoodput, 0), policy);
  EXPECT_NEAR(r.jobs[0].jct - warm.jobs[0].jct, 600, 1);
  // Paid from its resume at the first round (t = 60) to the last round.
  EXPECT_NEAR(r.node_hours, (r.times.back() - 60) / 3600.0, 1e-9);
}

TEST(AutoscaledSim, QueueModeMakesAJobWaitForItsNodesBoot) {
  const Workload w = one_job("queue.csv", "a,0,ncf,1,32768\n");
  FirstFreePolicy p1, p2;
  const RunResult warm = simulate(w, test::catalog(), scaled(ScaleMode::kQueue, 0), p1);
  const RunResult cold = simulate(w, test::catalog(), scaled(ScaleMode::kQueue, 600), p2);
  EXPECT_NEAR(cold.jobs[0].jct - warm.jobs[0].jct, 600, 1);
  EXPECT_EQ(cold.nodes_on.front(), 1);  // only the node placed on was resumed
}

TEST(AutoscaledSim, QueueModeSuspendsIdleNodesAndFixedPaysForAll) {
  // Two short jobs two hours apart: between them the node goes down.
  const Workload w = one_job("gap.csv", "a,0,ncf,1,32768\nb,7200,ncf,1,32768\n");
  FirstFreePolicy p1, p2;
  const RunResult q = simulate(w, test::catalog(), scaled(ScaleMode::kQueue, 120), p1);
  bool down = false;
  for (std::size_t k = 0; k < q.times.size(); ++k) down = down || (q.times[k] < 7200 && q.nodes_on[k] == 0);
  EXPECT_TRUE(down);
  const RunResult f = simulate(w, test::catalog(), scaled(ScaleMode::kFixed, 120), p2);
  EXPECT_DOUBLE_EQ(f.node_hours, 2 * f.times.back() / 3600.0);  // two nodes, every tick
  EXPECT_LT(q.node_hours, f.node_hours / 2);
}

TEST(AutoscaledSim, GoodputIsSchedPolluxsOnly) {
  SimOptions o = scaled(ScaleMode::kGoodput, 0);
  o.policy = "tiresias";
  EXPECT_THROW(simulate(one_job("t.csv", "a,0,ncf,1,32768\n"), test::catalog(), o), std::runtime_error);
}

}  // namespace
}  // namespace pollux::sim

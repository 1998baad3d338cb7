// pollux-sim under Slurm's backfill: time limits derived as documented,
// jobs rigid at their workload size and batch, never restarted, and none
// running past its limit on the paper's workload.
#include <gtest/gtest.h>

#include "cluster_sim.h"
#include "input_error.h"
#include "sim_test_support.h"
#include "time_limit.h"

namespace pollux::sim {
namespace {

using test::catalog;

TEST(TimeLimit, RoundsUpAsUsersDo) {
  EXPECT_EQ(user_time_limit(100, 2), 15 * 60);
  EXPECT_EQ(user_time_limit(450, 2), 15 * 60);
  EXPECT_EQ(user_time_limit(451, 2), 30 * 60);
  EXPECT_EQ(user_time_limit(901, 2), 3600);
  EXPECT_EQ(user_time_limit(1801, 2), 2 * 3600);
  EXPECT_EQ(user_time_limit(5000, 1), 2 * 3600);
  EXPECT_EQ(user_time_limit(5 * 3600, 2), 10 * 3600);
}

TEST(TimeLimit, RuntimeIsTheJobAloneAtItsSize) {
  // One job on an empty cluster: it starts at the first round and runs
  // exactly its rigid runtime (start stall included).
  const std::string p = test::write_file("one.csv",
                                         "name,time,application,num_replicas,batch_size\n"
                                         "cifar10-0,0,cifar10,6,2048\n");
  const Workload w = read_workload(p, catalog());
  SimOptions o;
  o.policy = "backfill";
  o.interval = kBackfillInterval;
  const RunResult r = simulate(w, catalog(), o);
  StepTimeCache steps(catalog().get("cifar10"));
  const double runtime = rigid_runtime(steps, 6, 2048, o.gpus_per_node, o.restart_delay);
  EXPECT_GT(runtime, o.restart_delay);
  EXPECT_DOUBLE_EQ(r.jobs[0].jct, kBackfillInterval + runtime);
  EXPECT_DOUBLE_EQ(r.jobs[0].gpu_seconds, 6 * runtime);  // rigid: 6 GPUs throughout
  EXPECT_EQ(r.jobs[0].time_limit, user_time_limit(runtime, kDefaultTimeLimitFactor));
  // A larger factor, a limit at least as long.
  o.time_limit_factor = 10;
  EXPECT_GE(simulate(w, catalog(), o).jobs[0].time_limit, 5 * runtime);
}

TEST(Backfill, PaperWorkloadRunsRigidJobsWithinTheirLimits) {
  const Workload w = read_workload(test::workloads_dir() + "/workload-1.csv", catalog());
  SimOptions o;
  o.policy = "backfill";
  o.interval = kBackfillInterval;
  const RunResult r = simulate(w, catalog(), o);
  ASSERT_EQ(r.jobs.size(), w.jobs.size());
  std::map<std::string, std::unique_ptr<StepTimeCache>> caches;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const JobOutcome& j = r.jobs[i];
    const WorkloadJob& wj = w.jobs[i];
    EXPECT_EQ(j.restarts, 0) << j.name;
    auto& c = caches[wj.application];
    if (c == nullptr) c = std::make_unique<StepTimeCache>(catalog().get(wj.application));
    const double alone = rigid_runtime(*c, wj.num_replicas, wj.batch_size, o.gpus_per_node, o.restart_delay);
    EXPECT_EQ(j.time_limit, user_time_limit(alone, kDefaultTimeLimitFactor)) << j.name;
    // Held exactly its size from start to end: service / size = its run.
    const double run = j.gpu_seconds / wj.num_replicas;
    EXPECT_LE(run, j.time_limit) << j.name << " ran past its time limit";
    EXPECT_LE(run, j.jct) << j.name;
  }
}

TEST(Backfill, JobsLargerThanTheClusterAreAnInputError) {
  const std::string p = test::write_file("big.csv",
                                         "name,time,application,num_replicas,batch_size\n"
                                         "cifar10-0,0,cifar10,2,256\nbert-1,0,bert,9,96\n");
  const Workload w = read_workload(p, catalog());
  SimOptions o;
  o.policy = "backfill";
  o.nodes = 2;
  EXPECT_THROW(check_runnable(w, o), InputError);
}

}  // namespace
}  // namespace pollux::sim

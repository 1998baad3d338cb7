// The simulated cluster, driven by small test policies: every job
// completes, results are deterministic, interference applies only to
// distributed jobs sharing a node, and the outputs add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "cluster_sim.h"
#include "input_error.h"
#include "report.h"
#include "sim_test_support.h"

namespace pollux::sim {
namespace {

using test::catalog;

// FIFO: each job, in order, gets its requested GPUs on the node with the
// most free GPUs if they fit on one node; running jobs keep their place.
class FifoPolicy : public Policy {
 public:
  FifoPolicy() : Policy(PolicyOptions{}) {}
  std::string_view name() const noexcept override { return "fifo-test"; }
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current, double) override {
    ++rounds;
    std::vector<int> free;
    for (const NodeInfo& n : nodes) free.push_back(n.gpus);
    std::vector<Placement> out(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i)
      for (const NodeShare& s : current[i]) free[static_cast<std::size_t>(s.node)] -= s.gpus;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (!current[i].empty()) {
        out[i] = current[i];
        continue;
      }
      const int want = std::min(jobs[i].requested_gpus, jobs[i].max_replicas);
      const auto best = std::max_element(free.begin(), free.end());
      if (*best >= want) {
        out[i] = {NodeShare{static_cast<int>(best - free.begin()), want}};
        *best -= want;
      }
    }
    return out;
  }
  int rounds = 0;
};

// Every job on nodes 0 and 1, one GPU each: distributed jobs that interfere.
class SpreadPolicy : public Policy {
 public:
  SpreadPolicy() : Policy(PolicyOptions{}) {}
  std::string_view name() const noexcept override { return "spread-test"; }
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>&,
                                  const std::vector<Placement>&, double) override {
    return std::vector<Placement>(jobs.size(), Placement{{0, 1}, {1, 1}});
  }
};

Workload small_workload() {
  const std::string p = test::write_file(
      "small.csv",
      "name,time,application,num_replicas,batch_size\n"
      "cifar10-0,0,cifar10,2,256\nncf-1,30,ncf,1,32768\nbert-2,100,bert,4,96\n"
      "cifar10-3,100,cifar10,4,512\nyolov3-4,200,yolov3,2,16\n");
  return read_workload(p, catalog());
}

TEST(ClusterSim, EveryJobCompletesAndTheSummaryAddsUp) {
  SimOptions o;
  o.policy = "tiresias";
  o.nodes = 2;
  o.record_timeline = true;
  FifoPolicy policy;
  const Workload w = small_workload();
  const RunResult r = simulate(w, catalog(), o, policy);
  ASSERT_EQ(r.jobs.size(), w.jobs.size());
  double sum = 0, gpu_s = 0, last = 0;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const JobOutcome& j = r.jobs[i];
    EXPECT_EQ(j.name, w.jobs[i].name);
    EXPECT_GT(j.jct, 0);
    EXPECT_EQ(j.jct, j.completion_time - j.submit_time);
    EXPECT_EQ(j.restarts, 0);  // FIFO never moves a job
    EXPECT_GT(j.gpu_seconds, 0);
    sum += j.jct;
    gpu_s += j.gpu_seconds;
    last = std::max(last, j.completion_time);
  }
  EXPECT_DOUBLE_EQ(r.avg_jct, sum / 5);
  EXPECT_NEAR(r.gpu_hours, gpu_s / 3600, 1e-9);
  EXPECT_DOUBLE_EQ(r.makespan, last);
  // A job is active from the first round on; in the last round all are done.
  EXPECT_EQ(r.rounds, policy.rounds + 1);
  ASSERT_EQ(r.times.size(), static_cast<std::size_t>(r.rounds));
  EXPECT_EQ(r.times[0], 60);
  // The timeline holds what the policy granted: 2 GPUs for job 0 from the first round.
  EXPECT_EQ(r.gpus[0][0], 2);
  EXPECT_LE(r.times.back() - o.interval, last);
}

TEST(ClusterSim, ArrivalsRoundsStartJobsBetweenFullRounds) {
  SimOptions o;
  o.policy = "pollux";
  o.nodes = 2;
  FifoPolicy plain, eager;
  const RunResult a = simulate(small_workload(), catalog(), o, plain);
  o.arrivals_tick = 10;
  const RunResult b = simulate(small_workload(), catalog(), o, eager);
  EXPECT_EQ(a.arrival_rounds, 0);
  EXPECT_GT(b.arrival_rounds, 0);
  EXPECT_GE(eager.rounds, b.rounds + b.arrival_rounds);  // each ran the policy once
  // Job 0, submitted at t=0, starts at t=10 instead of t=60 (its JCT
  // gains less: 10 s steps also change how its progress adds up).
  EXPECT_GT(a.jobs[0].jct - b.jobs[0].jct, 20);
  EXPECT_LT(b.avg_jct, a.avg_jct);
  for (const JobOutcome& j : b.jobs) EXPECT_EQ(j.restarts, 0);  // nothing running is moved
  o.arrivals_tick = 7;  // must divide the interval
  EXPECT_THROW(simulate(small_workload(), catalog(), o), std::runtime_error);
  o.arrivals_tick = 10;
  o.policy = "tiresias";
  EXPECT_THROW(simulate(small_workload(), catalog(), o), std::runtime_error);
}

// Job A (submitted at 0) gets 1 GPU at t=60, 2 at t=120, none at t=180;
// then, in the first round where it may take 3 or more (an arrivals round,
// or with `periodic` a periodic one), a placement over two nodes, 2 GPUs
// and 1: not a size Slurm can grant (GPUs per node are uniform). Every
// other answer keeps what a job holds.
class NonUniformAnswer : public Policy {
 public:
  explicit NonUniformAnswer(bool in_periodic) : Policy(PolicyOptions{}), in_periodic(in_periodic) {}
  std::string_view name() const noexcept override { return "non-uniform-test"; }
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>&,
                                  const std::vector<Placement>& current, double now) override {
    std::vector<Placement> out = current;
    const bool periodic = static_cast<long long>(now) % 60 == 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (jobs[i].submit_time != 0) continue;  // job A only
      if (periodic && now == 60) out[i] = {NodeShare{0, 1}};
      if (periodic && now == 120) out[i] = {NodeShare{0, 2}};
      if (periodic && now == 180) out[i].clear();
      if (periodic == in_periodic && now > 180 && current[i].empty() && jobs[i].max_replicas >= 3) {
        out[i] = {NodeShare{0, 2}, NodeShare{1, 1}};
        ++non_uniform;
      }
    }
    return out;
  }
  const bool in_periodic;
  int non_uniform = 0;
};

TEST(ClusterSim, WithArrivalsRoundsEveryRoundIsSchedPolluxsRound) {
  // With --arrivals-tick both kinds of round are sched::plan_round
  // (sim/sched_round.h): its validation refuses a size Slurm cannot
  // grant, as it does in the plugin
  // (sched-test.Round.AnAnswerOutsideAJobsRangeIsNotUsed), and a policy
  // that breaks its contract stops the simulation. A simulator with rounds
  // of its own would run job A on 2 + 1 GPUs.
  const std::string p = test::write_file("arrivals.csv",
                                         "name,time,application,num_replicas,batch_size\n"
                                         "a,0,cifar10,1,128\nb,190,cifar10,1,128\n");
  for (const bool periodic : {false, true}) {
    SimOptions o;
    o.policy = "pollux";
    o.nodes = 2;
    o.arrivals_tick = 10;
    NonUniformAnswer policy(periodic);
    try {
      simulate(read_workload(p, catalog()), catalog(), o, policy);
      ADD_FAILURE() << "the simulation used a placement plan_round refuses";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("outside its range"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(periodic ? "in a round at t=240 s" : "in an arrivals round at t=190 s"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(policy.non_uniform, 1);
  }
}

// Records what the round tells it (the first round's jobs) and answers
// as NonUniformAnswer(true), but starts any other job on one GPU of node
// 1; its options say whether it places uniformly.
class PaperAnswer : public NonUniformAnswer {
 public:
  explicit PaperAnswer(bool uniform) : NonUniformAnswer(true) { options_.uniform_gpus_per_node = uniform; }
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current, double now) override {
    if (first.empty()) first = jobs;
    std::vector<Placement> out = NonUniformAnswer::optimize(jobs, nodes, current, now);
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].submit_time != 0 && out[i].empty()) out[i] = {NodeShare{1, 1}};
    return out;
  }
  std::vector<JobInfo> first;
};

TEST(ClusterSim, WithoutArrivalsRoundsPolluxStillRunsSchedPolluxsRound) {
  // The paper's runs (no --arrivals-tick) with the scheduler's policy are
  // sched::plan_round too, under the one rule the simulator changes
  // (sim_rules: placements uniform only as the policy places): the policy
  // is told the core's view of each job (its request is its whole range,
  // 2 x 4 GPUs, not the workload's 1), and the core's validation judges
  // its answer (the round's error, not a check of the simulator's own). A
  // policy that places uniformly has job A's 2 + 1 GPUs refused there, as
  // sched/pollux would (RoundRules::uniform_placements:
  // sched-test.Round.RoundRulesMayAllowNonUniformPlacements); one that
  // does not, as the paper's Pollux, has them used.
  const std::string p = test::write_file("paper.csv",
                                         "name,time,application,num_replicas,batch_size\n"
                                         "a,0,cifar10,1,128\nb,190,cifar10,1,128\n");
  for (const bool uniform : {true, false}) {
    SimOptions o;
    o.policy = "pollux";
    o.nodes = 2;
    o.record_timeline = true;
    PaperAnswer policy(uniform);
    try {
      const RunResult r = simulate(read_workload(p, catalog()), catalog(), o, policy);
      EXPECT_FALSE(uniform) << "the simulation used a placement plan_round refuses";
      const auto t = std::find(r.times.begin(), r.times.end(), 240.0);
      ASSERT_NE(t, r.times.end());
      EXPECT_EQ(r.gpus[static_cast<std::size_t>(t - r.times.begin())][0], 3);  // 2 + 1
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(uniform) << e.what();
      EXPECT_NE(std::string(e.what()).find("(uniform_gpus_per_node)"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("in a round at t=240 s"), std::string::npos) << e.what();
    }
    EXPECT_EQ(policy.non_uniform, 1);
    ASSERT_EQ(policy.first.size(), 1u);
    EXPECT_EQ(policy.first[0].requested_gpus, 8);
  }
}

// Runs every job on one GPU of node 0 and records what each round tells it.
class TypedRecorder : public Policy {
 public:
  TypedRecorder() : Policy(PolicyOptions{}) {}
  std::string_view name() const noexcept override { return "typed-recorder-test"; }
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>&,
                                  const std::vector<Placement>&, double) override {
    last = jobs;
    return std::vector<Placement>(jobs.size(), Placement{NodeShare{0, 1}});
  }
  std::vector<JobInfo> last;
};

TEST(ClusterSim, ATypedPaperRunIsSchedPolluxsRoundToo) {
  // A cluster whose GPU types the policy sees, without arrivals rounds (the
  // Sia setup's runs): sched::plan_round as well. Only the core tells the
  // policy a job's request as its whole range (2 x 4 GPUs, not the
  // workload's 1), and its typed speedups follow sim_rules (a policy that
  // does not place uniformly: every size counts, 2 nodes x 3 GPUs too;
  // sched-test.GpuTypes.WithoutUniformPlacementsEveryTypesSpeedupCountsEverySize).
  const std::string p = test::write_file("typed.csv",
                                         "name,time,application,num_replicas,batch_size\n"
                                         "a,0,cifar10,1,128\n");
  SimOptions o;
  o.policy = "pollux";
  o.nodes = 2;
  o.gpu_types.resize(2);
  o.gpu_types[0].name = "t4";
  o.gpu_types[0].nodes = 1;
  o.gpu_types[1].name = "a100";
  o.gpu_types[1].nodes = 1;
  o.gpu_types[1].speed = 3;
  o.type_aware = true;
  TypedRecorder policy;
  const RunResult r = simulate(read_workload(p, catalog()), catalog(), o, policy);
  ASSERT_EQ(r.jobs.size(), 1u);
  ASSERT_EQ(policy.last.size(), 1u);
  const JobInfo& j = policy.last[0];
  EXPECT_EQ(j.requested_gpus, 8);
  ASSERT_EQ(j.speedup_by_type.size(), 2u);
  for (const SpeedupFn& f : j.speedup_by_type) {
    ASSERT_TRUE(f);
    EXPECT_GT(f(2, 3), 0);
  }
  EXPECT_GT(j.speedup_by_type[1](1, 1), j.speedup_by_type[0](1, 1));  // a100 told 3x as fast
}

TEST(ClusterSim, MinNodesBoundsEveryPolluxAllocation) {
  // Every job on at least 2 of the 2 nodes (a partition's MinNodes): each
  // round's allocation passes check_allocation (the simulator throws
  // otherwise), and every job still completes.
  SimOptions o;
  o.policy = "pollux";
  o.nodes = 2;
  o.min_nodes = 2;
  o.policy_options.uniform_gpus_per_node = true;
  o.policy_options.interference_avoidance = false;
  const RunResult r = simulate(small_workload(), catalog(), o);
  for (const JobOutcome& j : r.jobs) EXPECT_GT(j.jct, 0) << j.name;
  o.arrivals_tick = 10;
  EXPECT_NO_THROW(simulate(small_workload(), catalog(), o));
}

TEST(ClusterSim, SameInputsSameResults) {
  SimOptions o;
  o.policy = "tiresias";
  o.nodes = 1;
  FifoPolicy p1, p2;
  const RunResult a = simulate(small_workload(), catalog(), o, p1);
  const RunResult b = simulate(small_workload(), catalog(), o, p2);
  EXPECT_EQ(to_json(o, "t", {a}), to_json(o, "t", {b}));
}

TEST(ClusterSim, InterferenceSlowsOnlyWhenConfigured) {
  const std::string p = test::write_file("two.csv",
                                         "name,time,application,num_replicas,batch_size\n"
                                         "a,0,cifar10,2,256\nb,0,cifar10,2,256\n");
  const Workload w = read_workload(p, catalog());
  SimOptions o;
  o.policy = "tiresias";
  o.nodes = 2;
  o.policy_options.interference_avoidance = false;
  SpreadPolicy s1, s2;
  const RunResult calm = simulate(w, catalog(), o, s1);
  o.interference = 0.5;
  const RunResult noisy = simulate(w, catalog(), o, s2);
  EXPECT_NEAR(noisy.jobs[0].jct / calm.jobs[0].jct, 2.0, 0.05);
}

TEST(ClusterSim, TiresiasJobsLargerThanTheClusterAreAnInputError) {
  SimOptions o;
  o.policy = "tiresias";
  o.nodes = 1;
  o.gpus_per_node = 2;
  FifoPolicy p;
  try {
    simulate(small_workload(), catalog(), o, p);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("small.csv:4: job bert-2 asks for 4 GPUs; the cluster has 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(Report, PercentileIsNumpysLinearMethod) {
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 99), 3.97);
  EXPECT_DOUBLE_EQ(percentile({5}, 99), 5);
  EXPECT_DOUBLE_EQ(percentile({}, 99), 0);
}

TEST(Report, JsonHasTheDocumentedShape) {
  RunResult r;
  r.workload = "workload-6";
  r.jobs.push_back(JobOutcome{"job \"1\"", "cifar10", 0, 100, 100, 0, 60});
  r.avg_jct = 100;
  SimOptions o;
  const std::string j = to_json(o, "/t", {r});
  EXPECT_NE(j.find("\"policy\": \"pollux\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"workload-6\": {\"avg_jct\": 100, \"p99_jct\": 0, \"makespan\": 0"), std::string::npos) << j;
  EXPECT_NE(j.find("\"jcts\": {\"job \\\"1\\\"\": 100}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"restarts\": {\"job \\\"1\\\"\": 0}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"applications\": {\"job \\\"1\\\"\": \"cifar10\"}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"mean_avg_jct\": 100"), std::string::npos) << j;
}

// A cluster of GPU types is described by its types, not by the one node
// size --gpus-per-node gives (Sia's setup: 4-GPU T4 nodes, 8-GPU others).
TEST(Report, ATypedClusterIsDescribedByItsTypes) {
  RunResult r;
  r.workload = "w";
  SimOptions o;
  o.nodes = 3;
  o.gpus_per_node = 4;
  o.gpu_types.resize(2);
  o.gpu_types[0].name = "t4";
  o.gpu_types[0].nodes = 2;
  o.gpu_types[1].name = "a100";
  o.gpu_types[1].nodes = 1;
  o.gpu_types[1].gpus_per_node = 8;
  o.gpu_types[1].speed = 3;
  o.type_aware = true;
  EXPECT_EQ(total_gpus(o), 16);
  EXPECT_EQ(cluster_size(o), "3 nodes, 16 GPUs");
  const std::string j = to_json(o, "/t", {r});
  EXPECT_NE(j.find("\"gpus\": 16, \"type_aware\": true, \"gpu_types\": [{\"name\": \"t4\", \"nodes\": 2, "
                   "\"gpus_per_node\": 4, \"speed\": 1}, {\"name\": \"a100\", \"nodes\": 1, \"gpus_per_node\": 8, "
                   "\"speed\": 3}]"),
            std::string::npos)
      << j;
  std::ostringstream table;
  print_table(table, o, {r});
  EXPECT_NE(table.str().find("3 nodes, 16 GPUs"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("a100 1 nodes x 8 GPUs"), std::string::npos) << table.str();
}

}  // namespace
}  // namespace pollux::sim

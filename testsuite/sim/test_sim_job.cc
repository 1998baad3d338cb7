// The simulated job: progress, epochs, completion, restarts and the agent,
// checked against hand calculations from the trace files.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "input_error.h"
#include "job_info.h"
#include "sim_job.h"
#include "sim_test_support.h"

namespace pollux::sim {
namespace {

using test::catalog;
using test::csv_row;
using test::traces_dir;

// Step and sync time of `placement` at `bsz` read straight from placements.csv.
std::pair<double, double> table_row(const std::string& app, const std::string& placement, int bsz) {
  std::ifstream in(traces_dir() + "/" + app + "/placements.csv");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    char id[32];
    int b = 0;
    double step = 0, sync = 0;
    if (std::sscanf(line.c_str(), "%31[^,],%d,%lf,%lf", id, &b, &step, &sync) == 4 && placement == id && b == bsz)
      return {step, sync};
  }
  ADD_FAILURE() << "no row " << placement << " " << bsz;
  return {1, 0};
}

// Progress at the end of epoch e: the minimum over the validation runs.
double epoch_end(const std::string& app, const std::vector<int>& batches, int e) {
  double p = HUGE_VAL;
  for (int b : batches)
    p = std::min(p, csv_row(traces_dir() + "/" + app + "/validation-" + std::to_string(b) + ".csv", e - 1)[0]);
  return p;
}

TEST(SimJob, FixedBatchJobFollowsTheTracesEpochByEpoch) {
  // imagenet at its initial batch 200 on one GPU: m = 200, s = 0, gain 1,
  // so each epoch takes round(progress left x step time) seconds.
  StepTimeCache cache(catalog().get("imagenet"));
  SimJob job("i", 0, cache, 200);
  job.reallocate({1}, 30);
  EXPECT_EQ(job.atomic_bsz(), 200);
  EXPECT_EQ(job.accum_steps(), 0);
  EXPECT_EQ(job.batch_size(), 200);
  const double step = table_row("imagenet", "1", 200).first;
  const std::vector<int> batches{200, 400, 800, 1600, 3200, 6400, 12800};

  job.step(60, 0.0);  // 30 s restart delay, then 30 s of training
  EXPECT_NEAR(job.progress(), 30 / step, 1e-9);
  EXPECT_DOUBLE_EQ(job.attained_service(), 60);
  EXPECT_FALSE(job.complete());

  // From t = 60 on, each epoch boundary is round(progress left / rate) away.
  const double rate = 1 / step;
  double expect = 60, progress = 30 * rate;
  for (int e = 1; e <= 90; ++e) {
    const double end = epoch_end("imagenet", batches, e);
    expect += std::nearbyint((end - progress) / rate);
    progress = end;
  }
  job.step(1e7, 0.0);
  ASSERT_TRUE(job.complete());
  EXPECT_EQ(job.epoch(), 90);
  EXPECT_DOUBLE_EQ(job.completion_time(), expect);
  EXPECT_EQ(job.restarts(), 0);
}

TEST(SimJob, InterferenceSlowsProgress) {
  StepTimeCache cache(catalog().get("imagenet"));
  SimJob a("a", 0, cache, 400), b("b", 0, cache, 400);
  a.reallocate({1, 1}, 0);
  b.reallocate({1, 1}, 0);
  a.step(60, 0.0);
  b.step(60, 0.5);
  EXPECT_NEAR(b.progress(), 0.5 * a.progress(), 1e-9);
}

TEST(SimJob, AFasterGpuTypeSpeedsUpComputeOnly) {
  // imagenet at batch 400 on 1 + 1 GPUs (m = 200, s = 0): on a type twice
  // as fast the step takes sync + (step - sync) / 2.
  StepTimeCache cache(catalog().get("imagenet"));
  SimJob slow("s", 0, cache, 400), fast("f", 0, cache, 400, 3);
  slow.reallocate({1, 1}, 0);
  fast.reallocate({1, 1}, 0, 2, 2.0);
  slow.step(60, 0.0);
  fast.step(60, 0.0);
  const StepTimes& t = cache.get({1, 1}, 200);
  ASSERT_GT(t.sync, 0.0);
  EXPECT_NEAR(fast.progress() / slow.progress(), t.step / (t.sync + (t.step - t.sync) / 2), 1e-9);
  // Its profile went to slot 2 (the type), none to the others.
  EXPECT_TRUE(fast.perf_params(2).has_value());
  EXPECT_FALSE(fast.perf_params(0).has_value());
  EXPECT_EQ(fast.model_slots(), 3);
}

TEST(SimJob, RestartsCountReallocationsAfterTheFirstStart) {
  StepTimeCache cache(catalog().get("bert"));
  SimJob job("b", 0, cache, 384);
  EXPECT_EQ(job.restarts(), 0);
  job.reallocate({4}, 30);
  EXPECT_EQ(job.restarts(), 0);
  job.reallocate({4, 4}, 30);
  EXPECT_EQ(job.restarts(), 1);
  job.reallocate({}, 30);  // preempted
  EXPECT_EQ(job.gpus(), 0);
  EXPECT_EQ(job.batch_size(), 0);
  job.step(60, 0.0);  // waiting: no progress, no service
  EXPECT_EQ(job.progress(), 0);
  EXPECT_EQ(job.attained_service(), 0);
  job.reallocate({2}, 30);
  EXPECT_EQ(job.restarts(), 2);
}

// What sched/pollux learns from the agent's hint: the policy is told the
// job's own restart stall once it has run (at least the default D), the
// default D before.
TEST(SimJob, PolluxIsToldTheStallOfTheJobsLastRestart) {
  StepTimeCache cache(catalog().get("bert"));
  SimJob job("b", 0, cache, 384);
  const WorkloadJob w{"b", 0, "bert", 4, 384};
  EXPECT_EQ(job.restart_cost(), 0);
  EXPECT_EQ(pollux_job_info(job, w, 1, 100, 0, 30, 0).restart_delay, 30);
  job.reallocate({4}, 200);
  job.step(300, 0.0);
  EXPECT_EQ(job.restart_cost(), 200);
  EXPECT_EQ(pollux_job_info(job, w, 1, 300, 4, 30, 0).restart_delay, 200);
  job.reallocate({}, 30);  // preempted: no stall seen, the last one stands
  EXPECT_EQ(pollux_job_info(job, w, 1, 400, 0, 30, 0).restart_delay, 200);
  job.reallocate({2}, 20);  // faster than the default: the default is the floor (job_restart_delay)
  EXPECT_EQ(pollux_job_info(job, w, 1, 500, 2, 30, 0).restart_delay, 30);
}

// sched/pollux's rule (describe_elastic_job's run_start): a restart's
// cost weighs on the run it began, so a decision is not reversed within D
// seconds of the restart it caused, however old the job.
TEST(SimJob, PolluxWeighsARestartOnTheRunItBegan) {
  StepTimeCache cache(catalog().get("imagenet"));
  SimJob job("i", 0, cache, 0);
  const WorkloadJob w{"i", 0, "imagenet", 4, 0};
  job.reallocate({4}, 30);
  job.step(3000, 0.0);
  const JobInfo first = pollux_job_info(job, w, 1, 3000, 4, 30, 0);
  EXPECT_EQ(first.age, 3000) << "no restart yet: the whole life";
  EXPECT_EQ(first.restarts, 0);
  job.reallocate({4, 4}, 30);
  EXPECT_EQ(job.run_start(), 3000);
  job.step(40, 0.0);
  ASSERT_FALSE(job.complete());
  const JobInfo after = pollux_job_info(job, w, 1, 3040, 8, 30, 0);
  EXPECT_EQ(after.age, 40) << "the run the restart began, 40 s ago";
  EXPECT_EQ(after.restarts, 1);
  EXPECT_LT(restart_factor(after.age, after.restarts, 30), 0.2);
  const JobInfo sia = pollux_job_info(job, w, 1, 3040, 8, 30, 0, nullptr, false);
  EXPECT_EQ(sia.age, 3040) << "the Sia-like policy weighs the whole life, as Sia";
  job.reallocate({}, 30);  // preempted: nothing runs, so nothing of a run
  EXPECT_EQ(job.run_start(), 0);
}

TEST(SimJob, TheAgentProfilesFitsAndAdaptsTheBatch) {
  const Application& app = catalog().get("cifar10");
  StepTimeCache cache(app);
  SimJob job("p", 0, cache, 0);
  job.reallocate({1}, 30);
  // No profile yet: max(M0, m_min R) = 128 on one GPU, no accumulation.
  EXPECT_EQ(job.batch_size(), 128);
  EXPECT_FALSE(job.perf_params());
  EXPECT_FALSE(job.speedup_fn());
  job.step(60, 0.0);
  ASSERT_TRUE(job.perf_params());
  EXPECT_EQ(job.fits(), 1);
  EXPECT_EQ(job.max_profiled_replicas(), 1);
  const SpeedupFn s = job.speedup_fn();
  ASSERT_TRUE(s);
  EXPECT_NEAR(s(1, 1), 1.0, 1e-12);
  EXPECT_GT(s(1, 4), 1.0);
  // The new configuration is valid for the application.
  EXPECT_GE(job.atomic_bsz(), app.min_local_bsz());
  EXPECT_LE(job.atomic_bsz(), app.max_local_bsz());
  EXPECT_GE(job.batch_size(), 128);
  EXPECT_LE(job.batch_size(), 4096);
  // More GPUs: a new profile sample, a refit, a larger optimal batch.
  job.reallocate({4}, 30);
  job.step(120, 0.0);
  EXPECT_EQ(job.max_profiled_replicas(), 4);
  EXPECT_GE(job.fits(), 2);
  EXPECT_GE(job.batch_size(), 4 * app.min_local_bsz());
}

// --epochs: a job told N epochs completes when its progress reaches the end
// of its N-th epoch (Application::last_epoch, pollux-emulate's rule too).
TEST(SimJob, StoppedAfterNEpochsByTheApplicationsRule) {
  const Application& app = catalog().get("cifar10");
  EXPECT_EQ(app.last_epoch(0), app.max_epochs());
  EXPECT_EQ(app.last_epoch(4), 4);
  EXPECT_DOUBLE_EQ(app.target_progress(4), app.epoch_progress(4));
  EXPECT_DOUBLE_EQ(app.target_progress(0), app.epoch_progress(app.max_epochs()));
  EXPECT_THROW(app.last_epoch(app.max_epochs() + 1), InputError);
  EXPECT_THROW(app.last_epoch(-1), InputError);
  StepTimeCache cache(app);
  SimJob job("c", 0, cache, 128);
  job.set_last_epoch(4);
  job.reallocate({1}, 30);
  while (!job.complete()) job.step(10, 0.0);
  EXPECT_EQ(job.epoch(), 4);
  EXPECT_DOUBLE_EQ(job.progress(), app.target_progress(4));
  EXPECT_EQ(job.epoch_ends().size(), 4u);
  EXPECT_DOUBLE_EQ(job.completion_time(), job.epoch_ends().back());
  SimJob bad("d", 0, cache, 128);
  EXPECT_THROW(bad.set_last_epoch(app.max_epochs() + 1), InputError);
}

// --end-delay: the job ends that long after its last step, holding its
// GPUs; in its end it is not restarted by a re-allocation.
TEST(SimJob, EndDelayHoldsTheGpusUntilTheEnd) {
  StepTimeCache cache(catalog().get("cifar10"));
  SimJob plain("p", 0, cache, 128), late("l", 0, cache, 128);
  for (SimJob* j : {&plain, &late}) {
    j->set_last_epoch(1);
    j->reallocate({2}, 30);
  }
  late.set_end_delay(4);
  while (!plain.complete()) {
    plain.step(1, 0.0);
    late.step(1, 0.0);
  }
  EXPECT_TRUE(late.ending());
  EXPECT_FALSE(plain.ending());
  late.reallocate({1, 1}, 30);  // a round that moves it: nothing left to restart
  EXPECT_EQ(late.restarts(), 0);
  while (!late.complete()) late.step(1, 0.0);
  EXPECT_FALSE(late.ending());
  EXPECT_DOUBLE_EQ(late.completion_time(), plain.completion_time() + 4);
  EXPECT_NEAR(late.attained_service(), plain.attained_service() + 4 * 2, 1e-9);
}

}  // namespace
}  // namespace pollux::sim

// pollux-sim --study: the pruner stops the trials its rule says, at the
// rungs it says; every policy runs the same trials to the same epochs;
// sched/pollux's policy finishes a small search sooner than one GPU per
// trial; a driver's K trials in flight.
#include <gtest/gtest.h>

#include <algorithm>

#include "cluster_sim.h"
#include "input_error.h"
#include "sim_test_support.h"
#include "study.h"

namespace pollux::sim {
namespace {

using test::catalog;

TEST(Study, RungsAreMinResourceTimesPowersOfEta) {
  EXPECT_EQ(study_rungs(1, 4, 100), (std::vector<int>{1, 4, 16, 64}));
  EXPECT_EQ(study_rungs(2, 3, 50), (std::vector<int>{2, 6, 18}));
  EXPECT_EQ(study_rungs(1, 4, 1), std::vector<int>{});
}

// Optuna's promotion rule, applied by hand to the plan's own reported
// values in trial order: the plan stops exactly the trials it says.
TEST(Study, PrunerStopsTrialsOutsideTheTopOneOverEta) {
  StudySpec spec;
  spec.application = "cifar10";
  spec.trials = 40;
  spec.seed = 7;
  const int epochs = 100;
  const std::vector<TrialPlan> plan = plan_study(spec, epochs);
  const std::vector<int> rungs = study_rungs(1, 4, epochs);
  ASSERT_EQ(plan.size(), 40u);
  std::vector<std::vector<double>> seen(rungs.size());
  int pruned = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const TrialPlan& t = plan[i];
    int stop = epochs;
    for (std::size_t k = 0; k < rungs.size(); ++k) {
      ASSERT_LT(k, t.rung_values.size()) << "trial " << i << " reported nothing at rung " << k;
      seen[k].push_back(t.rung_values[k]);
      // Promoted iff fewer than max(n / 4, 1) of the n values so far are lower.
      const std::size_t n = seen[k].size(), keep = std::max<std::size_t>(n / 4, 1);
      const auto lower = std::count_if(seen[k].begin(), seen[k].end(), [&](double v) { return v < t.rung_values[k]; });
      if (static_cast<std::size_t>(lower) >= keep) {
        stop = rungs[k];
        break;
      }
    }
    EXPECT_EQ(t.last_epoch, stop) << "trial " << i;
    EXPECT_EQ(t.survives, stop == epochs) << "trial " << i;
    EXPECT_EQ(t.rung_values.size(), static_cast<std::size_t>(std::find(rungs.begin(), rungs.end(), stop) - rungs.begin()) +
                                        (stop == epochs ? 0 : 1))
        << "trial " << i;
    pruned += !t.survives;
  }
  // The first trial is the best so far at every rung; most of the others stop.
  EXPECT_TRUE(plan[0].survives);
  EXPECT_GE(pruned, 30);
  // Same seed, same plan; another seed, other qualities.
  const std::vector<TrialPlan> again = plan_study(spec, epochs);
  for (std::size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(again[i].rung_values, plan[i].rung_values);
  spec.seed = 8;
  EXPECT_NE(plan_study(spec, epochs)[0].quality, plan[0].quality);
}

TEST(Study, ParseNamesWhatIsWrong) {
  const StudySpec s = parse_study("cifar10:64:16", catalog());
  EXPECT_EQ(s.application, "cifar10");
  EXPECT_EQ(s.trials, 64);
  EXPECT_EQ(s.in_flight, 16);
  EXPECT_EQ(parse_study("cifar10:8:8", catalog()).in_flight, 0);  // all in flight
  for (const char* bad : {"cifar10", "cifar10:", "cifar10:0", "cifar10:x", "resnet:8", ":8", "cifar10:8:0",
                          "cifar10:8:9", "cifar10:1234567", "cifar10:8:"})
    EXPECT_THROW(parse_study(bad, catalog()), InputError) << bad;
}

struct Runs {
  std::vector<TrialPlan> plan;
  RunResult pollux, one_gpu;
};

// A small search (12 trials of cifar10) on 2 nodes x 4 GPUs.
const Runs& small_search() {
  static const Runs runs = [] {
    Runs r;
    StudySpec spec;
    spec.application = "cifar10";
    spec.trials = 12;
    spec.seed = 3;
    const Application& app = catalog().get("cifar10");
    r.plan = plan_study(spec, app.max_epochs());
    StepTimeCache steps(app);
    SimOptions o;
    o.nodes = 2;
    o.record_timeline = true;
    const Workload w = study_workload(spec, r.plan, study_batch(spec, steps, o.gpus_per_node));
    o.policy = "pollux";
    o.arrivals_tick = 1;
    r.pollux = simulate(w, catalog(), o);
    o.policy = "backfill";
    o.arrivals_tick = 0;
    o.interval = kBackfillInterval;
    r.one_gpu = simulate(w, catalog(), o);
    return r;
  }();
  return runs;
}

TEST(Study, EveryPolicyTrainsEachTrialToItsPrunedEpoch) {
  const Runs& r = small_search();
  int survivors = 0;
  for (std::size_t i = 0; i < r.plan.size(); ++i) {
    EXPECT_EQ(r.pollux.jobs[i].epochs, r.plan[i].last_epoch) << i;
    EXPECT_EQ(r.one_gpu.jobs[i].epochs, r.plan[i].last_epoch) << i;
    survivors += r.plan[i].survives;
  }
  ASSERT_GT(survivors, 0);
  ASSERT_LT(survivors, static_cast<int>(r.plan.size()));
}

// Deterministic (no draw at run time), and by a wide margin: one GPU per
// trial trains the survivors on one GPU each while pruned trials' GPUs
// idle; Pollux gives those GPUs to the survivors.
TEST(Study, PolluxFinishesASmallSearchSoonerThanOneGpuPerTrial) {
  const Runs& r = small_search();
  StudySpec spec;
  spec.application = "cifar10";
  spec.trials = 12;
  const int epochs = catalog().get("cifar10").max_epochs();
  const StudySummary p = summarize_study(spec, r.plan, r.pollux, epochs);
  const StudySummary f = summarize_study(spec, r.plan, r.one_gpu, epochs);
  EXPECT_LT(p.makespan, 0.7 * f.makespan);
  EXPECT_LT(p.best_finish, 0.7 * f.best_finish);
  EXPECT_GT(p.survivor_gpus_after, f.survivor_gpus_after);
}

// K in flight: the k-th end submits the k-th held trial at that time.
TEST(Study, InFlightSubmitsATrialWhenOneEnds) {
  StudySpec spec;
  spec.application = "cifar10";
  spec.trials = 6;
  spec.seed = 3;
  const Application& app = catalog().get("cifar10");
  const std::vector<TrialPlan> plan = plan_study(spec, app.max_epochs());
  StepTimeCache steps(app);
  SimOptions o;
  o.nodes = 1;
  o.policy = "backfill";
  o.interval = kBackfillInterval;
  o.in_flight = 2;
  const RunResult r = simulate(study_workload(spec, plan, study_batch(spec, steps, o.gpus_per_node)), catalog(), o);
  std::vector<double> ends;
  for (const JobOutcome& j : r.jobs) ends.push_back(j.completion_time);
  std::sort(ends.begin(), ends.end());
  EXPECT_EQ(r.jobs[0].submit_time, 0);
  EXPECT_EQ(r.jobs[1].submit_time, 0);
  for (std::size_t k = 2; k < r.jobs.size(); ++k) EXPECT_EQ(r.jobs[k].submit_time, ends[k - 2]) << k;
  // Never more than two trials submitted and incomplete at once.
  for (const JobOutcome& j : r.jobs) {
    int open = 0;
    for (const JobOutcome& other : r.jobs) open += other.submit_time <= j.submit_time && other.completion_time > j.submit_time;
    EXPECT_LE(open, 2) << j.name;
  }
}

}  // namespace
}  // namespace pollux::sim

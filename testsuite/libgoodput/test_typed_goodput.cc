// A job's goodput per GPU type (TypeRatios, TypedGoodput) and the one
// description of an elastic job for the policy (describe_elastic_job).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <tuple>

#include "pollux/job_description.h"
#include "pollux/throughput.h"
#include "pollux/typed_goodput.h"

namespace pollux {
namespace {

const PerfParams kPerf{0.02, 0.002, 0.10, 0.02, 0.03, 0.005, 2.0};
const GradStats kGrad{0.5, 20.0};
const BatchLimits kLimits{128, 8192, 16, 256, true};

PerfParams faster(PerfParams p, double speed) {
  p.alpha_c /= speed;
  p.beta_c /= speed;
  return p;
}

TEST(TypeRatios, PriorUntilObservedThenLearnt) {
  TypeRatios r({1.0, 2.0, 4.0});
  EXPECT_DOUBLE_EQ(r.grad_time_ratio(0, 1), 0.5);  // type 1 takes half the time
  EXPECT_DOUBLE_EQ(r.grad_time_ratio(2, 0), 4.0);
  EXPECT_DOUBLE_EQ(r.grad_time_ratio(1, 1), 1.0);
  // Jobs see type 1 at a third of type 0's time: the estimate moves there
  // (the prior counts as one observation), in both directions.
  for (int k = 0; k < 9; ++k) r.observe(0, 1, 0.3, 0.1);
  EXPECT_EQ(r.observations(1, 0), 9);
  EXPECT_NEAR(r.grad_time_ratio(0, 1), std::exp((std::log(0.5) + 9 * std::log(1.0 / 3)) / 10), 1e-12);
  EXPECT_NEAR(r.grad_time_ratio(1, 0) * r.grad_time_ratio(0, 1), 1.0, 1e-12);
  // Bad observations are ignored.
  r.observe(0, 2, -1, 0.1);
  r.observe(0, 2, NAN, 0.1);
  r.observe(0, 7, 1, 1);
  EXPECT_EQ(r.observations(0, 2), 0);
  EXPECT_THROW(TypeRatios({}), std::invalid_argument);
  EXPECT_THROW(TypeRatios({1.0, 0.0}), std::invalid_argument);
}

// A learner's state carried over (a restart): the same ratios as the original.
TEST(TypeRatios, ObservationsAddedInBulkGiveTheSameRatios) {
  TypeRatios r({1.0, 2.0, 4.0});
  r.observe(0, 1, 0.3, 0.1);
  r.observe(1, 0, 0.2, 0.5);
  r.observe(2, 1, 0.1, 0.4);
  TypeRatios copy({1.0, 2.0, 4.0});
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b) copy.add_observations(a, b, r.observations(a, b), r.log_ratio_sum(a, b));
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      EXPECT_EQ(copy.grad_time_ratio(a, b), r.grad_time_ratio(a, b)) << a << " " << b;
      EXPECT_EQ(copy.observations(a, b), r.observations(a, b));
    }
  copy.add_observations(0, 0, 3, 1.0);  // ignored: no pair, no count, no finite sum
  copy.add_observations(0, 1, 0, 1.0);
  copy.add_observations(0, 1, 2, NAN);
  EXPECT_EQ(copy.observations(0, 1), 2);
}

TEST(TypedGoodput, FittedTypesAreUsedAndOthersEstimatedFromRatios) {
  const TypeRatios r({1.0, 3.0});
  const TypedGoodput g({kPerf, std::nullopt}, kGrad, kLimits, r);
  EXPECT_EQ(g.source(0), TypeModelSource::kFitted);
  EXPECT_EQ(g.source(1), TypeModelSource::kEstimated);
  // T_grad scaled by the ratio, sync and gamma kept.
  EXPECT_DOUBLE_EQ(g.perf(1).alpha_c, kPerf.alpha_c / 3);
  EXPECT_DOUBLE_EQ(g.perf(1).beta_c, kPerf.beta_c / 3);
  EXPECT_DOUBLE_EQ(g.perf(1).alpha_n, kPerf.alpha_n);
  EXPECT_DOUBLE_EQ(g.perf(1).gamma, kPerf.gamma);
  EXPECT_EQ(g.best_type(), 1);
  EXPECT_DOUBLE_EQ(g.base_goodput(), g.goodput(1, 1, 1));
  // Its own fit on a type replaces the estimate.
  const TypedGoodput own({kPerf, faster(kPerf, 1.5)}, kGrad, kLimits, r);
  EXPECT_EQ(own.source(1), TypeModelSource::kFitted);
  EXPECT_DOUBLE_EQ(own.perf(1).alpha_c, kPerf.alpha_c / 1.5);
}

// Issue 34: types whose speeds nobody gave. Until a job has run on both
// types of a pair, an estimate across it is optimistic both ways
// (kExploreSpeedup), so that the policy moves a job there to measure it;
// the first observation ends it. A pair with a given speed never explores.
TEST(TypeRatios, APairOfUntoldSpeedsIsExploredUntilItsFirstObservation) {
  TypeRatios r({1.0, 1.0, 1.0}, {false, false, true});
  EXPECT_FALSE(r.explored(0, 1));
  EXPECT_TRUE(r.explored(0, 2));  // a given speed is relative to the others' seeds
  EXPECT_TRUE(r.explored(1, 1));
  EXPECT_DOUBLE_EQ(r.grad_time_ratio(0, 1), 1.0);  // the ratio itself is the seeds'
  EXPECT_DOUBLE_EQ(r.estimate_ratio(0, 1), 1.0 / TypeRatios::kExploreSpeedup);
  EXPECT_DOUBLE_EQ(r.estimate_ratio(1, 0), 1.0 / TypeRatios::kExploreSpeedup);
  EXPECT_DOUBLE_EQ(r.estimate_ratio(0, 2), 1.0);
  r.observe(1, 0, 0.1, 0.25);  // type 1 is 2.5 times as fast
  EXPECT_TRUE(r.explored(0, 1));
  EXPECT_DOUBLE_EQ(r.estimate_ratio(0, 1), r.grad_time_ratio(0, 1));
  EXPECT_LT(r.estimate_ratio(0, 1), 1.0);
  EXPECT_GT(r.estimate_ratio(1, 0), 1.0);
  // Every speed given (the default): nothing explored.
  EXPECT_TRUE(TypeRatios({1.0, 1.0}).explored(0, 1));
  EXPECT_THROW(TypeRatios({1.0, 1.0}, {false}), std::invalid_argument);
}

TEST(TypedGoodput, AnUnexploredTypeLooksFasterFromEitherSide) {
  const TypeRatios r({1.0, 1.0}, {false, false});
  for (int from = 0; from < 2; ++from) {
    std::vector<std::optional<PerfParams>> fits(2);
    fits[from] = kPerf;
    const TypedGoodput g(fits, kGrad, kLimits, r);
    EXPECT_EQ(g.source(1 - from), TypeModelSource::kEstimated);
    EXPECT_DOUBLE_EQ(g.perf(1 - from).alpha_c, kPerf.alpha_c / TypeRatios::kExploreSpeedup);
    EXPECT_EQ(g.best_type(), 1 - from) << from;
  }
  // Without a fit on any type: the seeds, no preference.
  const TypedGoodput none({std::nullopt, std::nullopt}, kGrad, kLimits, r);
  const auto s = none.speedups();
  EXPECT_DOUBLE_EQ(s[0](1, 4), s[1](1, 4));
}

TEST(TypeRatios, AJobsFitsAreObservedOncePerPair) {
  TypeRatios r({1.0, 1.0, 1.0}, {false, false, false});
  std::vector<bool> seen;
  EXPECT_FALSE(observe_fits(r, {kPerf, std::nullopt, std::nullopt}, 16, seen));
  EXPECT_TRUE(observe_fits(r, {kPerf, faster(kPerf, 2.5), std::nullopt}, 16, seen));
  EXPECT_FALSE(observe_fits(r, {kPerf, faster(kPerf, 2.5), std::nullopt}, 16, seen));  // told already
  EXPECT_EQ(r.observations(0, 1), 1);
  EXPECT_NEAR(std::exp(r.log_ratio_sum(0, 1)),
              predict_grad_time(faster(kPerf, 2.5), 16) / predict_grad_time(kPerf, 16), 1e-12);
  EXPECT_TRUE(observe_fits(r, {kPerf, faster(kPerf, 2.5), kPerf}, 16, seen));  // the new pairs only
  EXPECT_EQ(r.observations(0, 1), 1);
  EXPECT_EQ(r.observations(0, 2), 1);
  EXPECT_EQ(r.observations(1, 2), 1);
  EXPECT_FALSE(observe_fits(r, {kPerf}, 16, seen));  // not one slot per type
}

TEST(TypedGoodput, SpeedupsShareTheBestOneGpuBase) {
  const TypeRatios r({1.0, 2.0});
  const TypedGoodput g({kPerf, faster(kPerf, 2.0)}, kGrad, kLimits, r);
  const auto s = g.speedups();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[1](1, 1), 1.0);  // the best type's one GPU
  EXPECT_LT(s[0](1, 1), 1.0);
  EXPECT_GT(s[0](1, 1), 0.4);
  for (int n = 1; n <= 2; ++n)
    for (int k = 1; k <= 8; ++k) {
      EXPECT_NEAR(s[0](n, k * n), g.goodput(0, n, k * n) / g.base_goodput(), 1e-12);
      EXPECT_NEAR(s[1](n, k * n), g.goodput(1, n, k * n) / g.base_goodput(), 1e-12);
    }
  EXPECT_EQ(s[0](1, 0), 0.0);
}

TEST(TypedGoodput, OneTypeIsTheUntypedSpeedup) {
  const TypedGoodput g({kPerf}, kGrad, kLimits, TypeRatios({1.0}));
  const SpeedupFunction f(GoodputModel(kPerf, kGrad, kLimits.init_batch), kLimits);
  const auto s = g.speedups();
  for (int n = 1; n <= 4; ++n)
    for (int r = n; r <= 16; ++r) EXPECT_DOUBLE_EQ(s[0](n, r), f(n, r));
}

TEST(TypedGoodput, WithoutAFitSpeedupsAreLinearInTheTypesSpeeds) {
  const TypedGoodput g({std::nullopt, std::nullopt, std::nullopt}, kGrad, kLimits, TypeRatios({1.0, 2.0, 4.0}));
  EXPECT_EQ(g.source(0), TypeModelSource::kNone);
  EXPECT_EQ(g.best_type(), 2);
  const auto s = g.speedups();
  EXPECT_DOUBLE_EQ(s[2](1, 3), 3.0);
  EXPECT_DOUBLE_EQ(s[0](1, 4), 1.0);
  EXPECT_DOUBLE_EQ(s[1](2, 2), 1.0);
  EXPECT_THROW(TypedGoodput({kPerf}, kGrad, kLimits, TypeRatios({1.0, 2.0})), std::invalid_argument);
}

TEST(DescribeElasticJob, TheRulesSchedPolluxAndTheSimulatorShare) {
  // Submitted at 100 s, now 110 s, 2 restarts, profiled at 3 replicas.
  ElasticJobState s;
  s.id = 7;
  std::tie(s.submit_time, s.now, s.restarts, s.max_profiled_replicas) = std::make_tuple(100.0, 110.0, 2, 3);
  std::tie(s.max_gpus, s.max_gpus_by_batch) = std::make_pair(64, 40);
  JobInfo i = describe_elastic_job(s, 30, false);
  EXPECT_EQ(i.id, 7u);
  EXPECT_DOUBLE_EQ(i.age, 10);
  EXPECT_EQ(i.max_replicas, 6);  // twice the profiled scale
  // Arrivals round: at least D x (restarts + 1) old, so that the restart
  // factor max(age - restarts D, 0) / (age + D) is not 0.
  i = describe_elastic_job(s, 30, true);
  EXPECT_DOUBLE_EQ(i.age, 90);
  EXPECT_GT(std::max(i.age - i.restarts * 30.0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(i.restart_delay, 30);
  // A restart cost the job has shown replaces the policy's D.
  s.restart_seconds = 120;
  i = describe_elastic_job(s, 30, true);
  EXPECT_DOUBLE_EQ(i.restart_delay, 120);
  EXPECT_DOUBLE_EQ(i.age, 360);
  // ... when it is longer: the policy's D is the floor.
  s.restart_seconds = 10;
  EXPECT_DOUBLE_EQ(describe_elastic_job(s, 30, false).restart_delay, 30);
  s.restart_seconds = 0;
  // Never below what it holds, nor below its minimum; capped by limits.
  s.held_gpus = 12;
  EXPECT_EQ(describe_elastic_job(s, 30, false).max_replicas, 12);
  s.max_gpus_limit = 8;
  EXPECT_EQ(describe_elastic_job(s, 30, false).max_replicas, 8);
  s.min_gpus = 10;
  EXPECT_EQ(describe_elastic_job(s, 30, false).max_replicas, 10);
  EXPECT_EQ(describe_elastic_job(s, 30, false).min_replicas, 10);
  // Not profiled yet: one GPU; M_max / m_min caps.
  ElasticJobState fresh;
  fresh.max_gpus = 64;
  EXPECT_EQ(describe_elastic_job(fresh, 30, false).max_replicas, 1);
  fresh.max_profiled_replicas = 32;
  fresh.max_gpus_by_batch = 20;
  EXPECT_EQ(describe_elastic_job(fresh, 30, false).max_replicas, 20);
  fresh.now = -5;  // clock skew: never a negative age
  EXPECT_DOUBLE_EQ(describe_elastic_job(fresh, 30, false).age, 0.0);
}

}  // namespace
}  // namespace pollux

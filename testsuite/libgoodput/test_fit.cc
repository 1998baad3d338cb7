// The throughput model's fit recovers known parameters and applies the
// reference's priors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "pollux/throughput.h"

namespace pollux {
namespace {

const PerfParams kTruth{0.02, 0.002, 0.10, 0.02, 0.03, 0.005, 2.0, 0.05};

struct Shape {
  int nodes, replicas;
};

// Samples the model at every (shape, atomic batch), each time multiplied by
// exp(N(0, noise)), `repeats` times: a micro-step (the agent's grad_time:
// compute, and under the sharded form its collectives) and a step.
std::vector<ProfileSample> synthesize(const PerfParams& p, const std::vector<Shape>& shapes,
                                      const std::vector<double>& batches, double noise = 0.0,
                                      int repeats = 1, unsigned seed = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, noise > 0 ? noise : 1.0);
  auto jitter = [&] { return noise > 0 ? std::exp(z(rng)) : 1.0; };
  std::vector<ProfileSample> out;
  for (int r = 0; r < repeats; ++r)
    for (const Shape& s : shapes)
      for (double m : batches)
        out.push_back({s.nodes, s.replicas, m, predict_micro_step_time(p, s.nodes, s.replicas, m) * jitter(),
                       predict_step_time(p, s.nodes, s.replicas, m) * jitter()});
  return out;
}

// Enough shapes and batch sizes that every parameter shows in the times
// (intra-node retrogression needs single-node runs well beyond 2 GPUs).
const std::vector<Shape> kAllShapes{{1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 6}, {1, 8}, {2, 4}, {2, 8}, {3, 12}, {4, 16}};
const std::vector<double> kBatches{4, 8, 16, 32, 64, 128};

// Indices of PerfParams::to_array() and FitResult::fixed.
enum Param { kAlphaC, kBetaC, kAlphaN, kBetaN, kAlphaR, kBetaR, kGamma, kAlpha1 };
const char* const kNames[PerfParams::kCount] = {"alpha_c", "beta_c", "alpha_n", "beta_n",
                                                "alpha_r", "beta_r", "gamma",  "alpha_1"};

void expect_params_near(const PerfParams& got, const PerfParams& want, double rel) {
  const auto g = got.to_array(), w = want.to_array();
  for (int k = 0; k < PerfParams::kCount; ++k)
    EXPECT_NEAR(g[k], w[k], rel * w[k]) << kNames[k];
}

TEST(Fit, RecoversParametersFromNoiseFreeSamples) {
  const FitResult r = fit_perf_params(synthesize(kTruth, kAllShapes, kBatches));
  expect_params_near(r.params, kTruth, 0.01);
  for (bool f : r.fixed) EXPECT_FALSE(f);
}

TEST(Fit, RecoversParametersFromNoisySamples) {
  // 5% log-normal noise on every measured time, five measurements of each
  // configuration (an agent averages many steps per configuration).
  for (unsigned seed : {1u, 2u, 3u}) {
    const FitResult r = fit_perf_params(synthesize(kTruth, kAllShapes, kBatches, 0.05, 5, seed));
    SCOPED_TRACE(seed);
    expect_params_near(r.params, kTruth, 0.10);
  }
}

// One measurement per configuration, each with 5% log-normal noise (the
// requirement: "with 5% noise within 10%", not averaged down). The 60
// configurations above are too few for that: single samples of them put
// some parameter beyond 10% for 44 of 100 seeds (the intra-node betas,
// which only single-node runs of several sizes show). These 560 distinct
// configurations (1-16 GPUs on one node, 2-4 nodes of 1-8 GPUs, 14 atomic
// batches from 1 to 128) identify all seven of the paper: over seeds
// 1-3000 every one stayed within 8.0% of the truth (before alpha_1; with
// it, every parameter alpha_1 included stayed within 10% over seeds 1-300).
TEST(Fit, RecoversParametersFromSingleNoisySamples) {
  std::vector<Shape> shapes;
  for (int r = 1; r <= 16; ++r) shapes.push_back({1, r});
  for (int n = 2; n <= 4; ++n)
    for (int per_node = 1; per_node <= 8; ++per_node) shapes.push_back({n, n * per_node});
  const std::vector<double> batches{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const auto samples = synthesize(kTruth, shapes, batches, 0.05, 1, seed);
    ASSERT_EQ(samples.size(), 560u);
    const FitResult r = fit_perf_params(samples);
    SCOPED_TRACE(seed);
    expect_params_near(r.params, kTruth, 0.10);
    for (bool f : r.fixed) EXPECT_FALSE(f);
  }
}

TEST(Fit, PredictionsMatchTheSamplesItWasFittedOn) {
  const auto samples = synthesize(kTruth, kAllShapes, kBatches, 0.05, 2, 9);
  const PerfParams p = fit_perf_params(samples).params;
  for (const ProfileSample& s : samples) {
    EXPECT_NEAR(predict_step_time(p, s.nodes, s.replicas, s.atomic_batch), s.step_time, 0.2 * s.step_time);
    EXPECT_NEAR(predict_grad_time(p, s.atomic_batch), s.grad_time, 0.2 * s.grad_time);
  }
}

TEST(Fit, PriorOneBatchSizeFixesAlphaC) {
  const auto samples = synthesize(kTruth, kAllShapes, {64});
  double mean = 0;
  for (const auto& s : samples) mean += s.grad_time / samples.size();
  const FitResult r = fit_perf_params(samples);
  EXPECT_TRUE(r.fixed[kAlphaC]);
  EXPECT_DOUBLE_EQ(r.params.alpha_c, mean / 2);
  // beta_c then explains the rest of the grad time.
  EXPECT_NEAR(r.params.alpha_c + r.params.beta_c * 64, predict_grad_time(kTruth, 64), 1e-3);
}

TEST(Fit, PriorNoMultiNodeSampleMakesInterNodeSlower) {
  const FitResult r = fit_perf_params(synthesize(kTruth, {{1, 1}, {1, 2}, {1, 3}, {1, 4}}, kBatches));
  EXPECT_TRUE(r.fixed[kAlphaN]);
  EXPECT_TRUE(r.fixed[kBetaN]);
  EXPECT_NEAR(r.params.alpha_r, kTruth.alpha_r, 0.01 * kTruth.alpha_r);
  EXPECT_DOUBLE_EQ(r.params.alpha_n, 1.1 * r.params.alpha_r);
  EXPECT_DOUBLE_EQ(r.params.beta_n, 1.1 * r.params.beta_r);
}

// Priors that pin parameters the samples cannot show to 1e-8.
struct PinCase {
  const char* name;
  std::vector<Shape> shapes;
  std::vector<Param> pinned;  // fixed at 1e-8
  std::vector<Param> fitted;  // left to the fit
};

class FitPrior : public ::testing::TestWithParam<PinCase> {};

TEST_P(FitPrior, PinsWhatTheSamplesCannotShow) {
  const PinCase& c = GetParam();
  const FitResult r = fit_perf_params(synthesize(kTruth, c.shapes, kBatches));
  const auto got = r.params.to_array();
  for (Param k : c.pinned) {
    EXPECT_TRUE(r.fixed[k]) << kNames[k];
    EXPECT_DOUBLE_EQ(got[k], 1e-8) << kNames[k];
  }
  for (Param k : c.fitted) EXPECT_FALSE(r.fixed[k]) << kNames[k];
}

INSTANTIATE_TEST_SUITE_P(
    Fit, FitPrior,
    ::testing::Values(PinCase{"NoSingleNodeMultiReplicaSampleFixesIntraNode", {{1, 1}, {2, 4}, {4, 16}},
                              {kAlphaR, kBetaR}, {kAlphaN, kAlpha1}},
                      PinCase{"NoSampleBeyondTwoReplicasFixesBetas", {{1, 1}, {1, 2}, {2, 2}},
                              {kBetaN, kBetaR}, {kAlphaN, kAlphaR, kAlpha1}},
                      PinCase{"NoOneReplicaSampleFixesAlpha1", {{1, 2}, {1, 4}, {2, 4}},
                              {kAlpha1}, {kAlphaN, kAlphaR, kBetaR}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Fit, OneReplicaOnlyStillGivesAUsableModel) {
  // The first profile a job has: one GPU, one batch size.
  const FitResult r = fit_perf_params(synthesize(kTruth, {{1, 1}}, {32}));
  EXPECT_TRUE(r.params.valid());
  EXPECT_NEAR(predict_step_time(r.params, 1, 1, 32), predict_step_time(kTruth, 1, 1, 32), 1e-3);
}

// One replica as pollux.torch profiles it on the CPU (doc/agent.md): the
// micro-step up to the last gradient, and a step that adds a constant
// (the optimizer, the next batch's loading) that does not overlap it. The
// paper's model (T_sync(1) = 0) has to spread that constant over the
// micro-steps and misses configurations with accumulation; alpha_1 holds
// it once per optimizer step, so accumulated steps are predicted too.
TEST(Fit, OneReplicaPerStepTermPredictsAccumulation) {
  const double per_step = 0.11;  // the 10.5 M-parameter MLP's share (doc/benchmarks.md)
  std::vector<ProfileSample> samples;
  for (double m : {16.0, 32.0, 64.0, 128.0, 256.0}) {
    const double grad = 0.005 + 0.0085 * m;
    samples.push_back({1, 1, m, grad, grad + per_step});
  }
  const FitResult r = fit_perf_params(samples);
  EXPECT_FALSE(r.fixed[kAlpha1]);
  for (double m : {16.0, 64.0, 256.0})
    for (int s : {0, 1, 3}) {
      const double truth = (s + 1) * (0.005 + 0.0085 * m) + per_step;
      EXPECT_NEAR(predict_iter_time(r.params, 1, 1, m, s), truth, 0.02 * truth) << m << " x " << s + 1;
    }
}

TEST(Fit, RejectsBadSamples) {
  EXPECT_THROW(fit_perf_params({}), std::invalid_argument);
  EXPECT_THROW(fit_perf_params({{1, 1, 32, 0.0, 0.1}}), std::invalid_argument);
  EXPECT_THROW(fit_perf_params({{1, 1, 32, 0.1, NAN}}), std::invalid_argument);
  EXPECT_THROW(fit_perf_params({{2, 1, 32, 0.1, 0.2}}), std::invalid_argument);  // nodes > replicas
  EXPECT_THROW(fit_perf_params({{1, 1, -4, 0.1, 0.2}}), std::invalid_argument);
}

TEST(Throughput, ModelPiecesFollowTheFormulas) {
  const PerfParams p = kTruth;
  EXPECT_DOUBLE_EQ(predict_grad_time(p, 10), 0.02 + 0.002 * 10);
  EXPECT_NEAR(predict_sync_time(p, 1, 1), 0.05, 1e-12);  // alpha_1
  EXPECT_NEAR(predict_sync_time(PerfParams{}, 1, 1), 0.0, 1e-7);  // the paper's zero by default
  EXPECT_DOUBLE_EQ(predict_sync_time(p, 1, 4), 0.03 + 0.005 * 2);
  EXPECT_DOUBLE_EQ(predict_sync_time(p, 2, 8), 0.10 + 0.02 * 6);
  const double g = predict_grad_time(p, 10), s = predict_sync_time(p, 2, 8);
  EXPECT_NEAR(predict_step_time(p, 2, 8, 10), std::pow(g * g + s * s, 0.5), 1e-12);
  EXPECT_NEAR(predict_iter_time(p, 2, 8, 10, 3), 3 * g + std::hypot(g, s), 1e-12);
  EXPECT_NEAR(predict_throughput(p, 2, 8, 10, 3), 8 * 10 * 4 / (3 * g + std::hypot(g, s)), 1e-9);
}

// The sharded form (FSDP: collectives inside every micro-step, alpha_1 per
// step at every size; pollux/throughput.h).
TEST(Throughput, ShardedModelPiecesFollowTheFormulas) {
  PerfParams p = kTruth;
  p.sharded = true;
  const double g = predict_grad_time(p, 10);
  EXPECT_DOUBLE_EQ(g, 0.02 + 0.002 * 10);  // compute only, as before
  const double c = predict_sync_time(p, 1, 4);
  EXPECT_DOUBLE_EQ(c, 0.03 + 0.005 * 2);
  EXPECT_DOUBLE_EQ(predict_sync_time(p, 2, 8), 0.10 + 0.02 * 6);
  EXPECT_NEAR(predict_sync_time(p, 1, 1), 0.0, 1e-7);  // one replica gathers nothing
  const double micro = std::hypot(g, c);  // gamma 2
  EXPECT_NEAR(predict_micro_step_time(p, 1, 4, 10), micro, 1e-12);
  EXPECT_NEAR(predict_step_time(p, 1, 4, 10), micro + 0.05, 1e-12);
  EXPECT_NEAR(predict_iter_time(p, 1, 4, 10, 3), 4 * micro + 0.05, 1e-12);
  EXPECT_NEAR(predict_throughput(p, 1, 4, 10, 3), 4 * 10 * 4 / (4 * micro + 0.05), 1e-9);
  EXPECT_NEAR(predict_micro_step_time(p, 1, 1, 10), g, 1e-9);
  EXPECT_NEAR(predict_iter_time(p, 1, 1, 10, 2), 3 * g + 0.05, 1e-9);
  const double cn = predict_sync_time(p, 2, 8);
  EXPECT_NEAR(predict_iter_time(p, 2, 8, 10, 1), 2 * std::hypot(g, cn) + 0.05, 1e-12);
}

TEST(Throughput, NotShardedByDefault) {
  EXPECT_FALSE(PerfParams{}.sharded);
  EXPECT_FALSE(kTruth.sharded);
  EXPECT_FALSE(PerfParams::from_array(kTruth.to_array()).sharded);
  for (int r : {1, 2, 4})
    EXPECT_DOUBLE_EQ(predict_micro_step_time(kTruth, 1, r, 10), predict_grad_time(kTruth, 10));
  PerfParams p = kTruth;
  EXPECT_EQ(p, kTruth);
  p.sharded = true;
  EXPECT_NE(p, kTruth);  // the same numbers, another form
  EXPECT_GT(predict_iter_time(p, 1, 4, 10, 3), predict_iter_time(kTruth, 1, 4, 10, 3));
  EXPECT_FALSE(fit_perf_params(synthesize(kTruth, kAllShapes, kBatches)).params.sharded);
}

PerfParams sharded_truth() {
  PerfParams p = kTruth;
  p.sharded = true;
  return p;
}

FitOptions sharded_fit() {
  FitOptions o;
  o.sharded = true;
  return o;
}

TEST(Fit, ShardedRecoversParametersFromNoiseFreeSamples) {
  const PerfParams truth = sharded_truth();
  const FitResult r = fit_perf_params(synthesize(truth, kAllShapes, kBatches), sharded_fit());
  EXPECT_TRUE(r.params.sharded);
  expect_params_near(r.params, truth, 0.01);
  for (bool f : r.fixed) EXPECT_FALSE(f);
}

TEST(Fit, ShardedRecoversParametersFromNoisySamples) {
  const PerfParams truth = sharded_truth();
  for (unsigned seed : {1u, 2u, 3u}) {
    const FitResult r = fit_perf_params(synthesize(truth, kAllShapes, kBatches, 0.05, 5, seed), sharded_fit());
    SCOPED_TRACE(seed);
    expect_params_near(r.params, truth, 0.10);
  }
}

// Without one-replica samples the sharded fit still has alpha_1: the step
// minus the micro-step at every size.
TEST(Fit, ShardedFitsAlpha1WithoutOneReplica) {
  const PerfParams truth = sharded_truth();
  const std::vector<Shape> shapes{{1, 2}, {1, 3}, {1, 4}, {1, 8}};
  const FitResult r = fit_perf_params(synthesize(truth, shapes, kBatches), sharded_fit());
  EXPECT_FALSE(r.fixed[kAlpha1]);
  EXPECT_NEAR(r.params.alpha_1, truth.alpha_1, 0.02 * truth.alpha_1);
}

// The FSDP profile's shape (doc/benchmarks.md, "FSDP on the CPU: the
// step-time model": 1, 2 and 3 ranks on one node, a few atomic batches
// each, communication inside the micro-step): DDP's model misses some
// configuration by more than 10%; the sharded form predicts each within
// 2%, and accumulated steps too.
TEST(Fit, ShardedFitPredictsAnFsdpProfile) {
  PerfParams truth{0.06, 0.006, 1e-8, 1e-8, 0.45, 0.35, 1.2, 0.02};
  truth.sharded = true;
  std::vector<ProfileSample> samples;
  const std::vector<std::pair<int, double>> configs{{1, 32}, {2, 16}, {2, 41}, {2, 128}, {3, 40}, {3, 73}};
  for (const auto& [r, m] : configs)
    samples.push_back({1, r, m, predict_micro_step_time(truth, 1, r, m), predict_step_time(truth, 1, r, m)});
  const PerfParams ddp = fit_perf_params(samples).params;
  const PerfParams fsdp = fit_perf_params(samples, sharded_fit()).params;
  double worst_ddp = 0;
  for (const auto& [r, m] : configs) {
    const double want = predict_iter_time(truth, 1, r, m, 0);
    worst_ddp = std::max(worst_ddp, std::abs(predict_iter_time(ddp, 1, r, m, 0) / want - 1));
    EXPECT_NEAR(predict_iter_time(fsdp, 1, r, m, 0), want, 0.02 * want) << r << " ranks, atomic " << m;
    for (int s : {1, 3}) {
      const double acc = predict_iter_time(truth, 1, r, m, s);
      EXPECT_NEAR(predict_iter_time(fsdp, 1, r, m, s), acc, 0.02 * acc) << r << " ranks, " << m << " x " << s + 1;
    }
  }
  EXPECT_GT(worst_ddp, 0.10);
}

}  // namespace
}  // namespace pollux

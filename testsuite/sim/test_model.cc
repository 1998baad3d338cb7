// The application model: interpolation (1-D and scattered-data) and what
// the traces say about each application.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "delaunay_interp.h"
#include "linear_interp.h"
#include "sim_test_support.h"

namespace pollux::sim {
namespace {

using test::catalog;
using test::csv_row;
using test::traces_dir;

TEST(LinearInterp, ExactAtKnotsLinearBetweenAndTheTwoOutOfRangeModes) {
  const std::vector<double> xs{1, 2, 4}, ys{10, 20, 0};
  EXPECT_EQ(*interp_linear(xs, ys, 2, OutOfRange::kNone), 20);
  EXPECT_EQ(*interp_linear(xs, ys, 4, OutOfRange::kNone), 0);
  EXPECT_DOUBLE_EQ(*interp_linear(xs, ys, 1.5, OutOfRange::kNone), 15);
  EXPECT_DOUBLE_EQ(*interp_linear(xs, ys, 3, OutOfRange::kNone), 10);
  EXPECT_FALSE(interp_linear(xs, ys, 0.5, OutOfRange::kNone));
  EXPECT_FALSE(interp_linear(xs, ys, 5, OutOfRange::kNone));
  EXPECT_EQ(*interp_linear(xs, ys, 0.5, OutOfRange::kClamp), 10);
  EXPECT_EQ(*interp_linear(xs, ys, 5, OutOfRange::kClamp), 0);
}

TEST(DelaunayInterp, ReproducesALinearFunctionInsideTheHullOnly) {
  // A grid (many co-spherical points, as in the traces) plus random points.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> pts, vals;
  auto f = [](double x, double y, double z) { return 2 * x - 3 * y + 0.5 * z + 1; };
  for (int x = 0; x <= 4; ++x)
    for (int y = 0; y <= 4; ++y)
      for (int z = 0; z <= 4; ++z) {
        pts.insert(pts.end(), {double(x), double(y), double(z * 100)});
        vals.insert(vals.end(), {f(x, y, z * 100), 7.0});
      }
  const DelaunayInterpolator d(3, pts, 2, vals);
  EXPECT_GT(d.simplex_count(), 100u);
  for (int i = 0; i < 500; ++i) {
    const double x[3] = {4 * u(rng), 4 * u(rng), 400 * u(rng)};
    double out[2];
    ASSERT_TRUE(d.interpolate(x, out));
    EXPECT_NEAR(out[0], f(x[0], x[1], x[2]), 1e-9);
    EXPECT_NEAR(out[1], 7.0, 1e-12);
  }
  // Data points and points on the hull's faces.
  for (const auto& x : std::vector<std::array<double, 3>>{{0, 0, 0}, {4, 4, 400}, {2, 0, 150}, {4, 1.5, 0}}) {
    double out[2];
    ASSERT_TRUE(d.interpolate(x.data(), out));
    EXPECT_NEAR(out[0], f(x[0], x[1], x[2]), 1e-9);
  }
  double out[2];
  const double outside[3] = {5, 1, 100};
  EXPECT_FALSE(d.interpolate(outside, out));
}

TEST(DelaunayInterp, FlatOrTooFewPointsCannotBeTriangulated) {
  EXPECT_THROW(DelaunayInterpolator(3, {0, 0, 0, 1, 0, 0, 0, 1, 0}, 1, {1, 2, 3}), std::runtime_error);
  std::vector<double> flat, vals;
  for (int i = 0; i < 10; ++i) {
    flat.insert(flat.end(), {double(i % 3), double(i / 3), 0.0});
    vals.push_back(i);
  }
  EXPECT_THROW(DelaunayInterpolator(3, flat, 1, vals), std::runtime_error);
}

TEST(Application, LimitsAndEpochsAreTheArtifacts) {
  const Application& bert = catalog().get("bert");
  EXPECT_EQ(bert.init_batch(), 12);
  EXPECT_EQ(bert.max_batch(), 384);
  EXPECT_EQ(bert.min_local_bsz(), 4);
  EXPECT_EQ(bert.max_local_bsz(), 12);
  EXPECT_EQ(bert.max_epochs(), 2);
  EXPECT_EQ(catalog().get("yolov3").max_local_bsz(), 8);  // the artifact's memory cap
  EXPECT_EQ(catalog().get("yolov3").max_epochs(), 50);
  EXPECT_EQ(catalog().get("cifar10").max_epochs(), 100);
  EXPECT_EQ(catalog().get("imagenet").max_epochs(), 90);
  EXPECT_EQ(catalog().get("deepspeech2").max_epochs(), 80);
  const Application& ncf = catalog().get("ncf");
  EXPECT_EQ(ncf.max_epochs(), 10);
  EXPECT_EQ(ncf.spec().fixed_batch, 32768);
  EXPECT_EQ(ncf.spec().max_replicas, 1);
  EXPECT_EQ(ncf.max_batch(), 32768);
}

TEST(Application, EpochEndsAtTheSmallestProgressOfAllRuns) {
  const Application& c = catalog().get("cifar10");
  EXPECT_EQ(c.epoch_progress(0), 0);
  for (int e : {1, 2, 50, 100}) {
    double expect = HUGE_VAL;
    for (int b : {128, 256, 512, 1024, 2048, 4096})
      expect = std::min(expect, csv_row(traces_dir() + "/cifar10/validation-" + std::to_string(b) + ".csv", e - 1)[0]);
    EXPECT_EQ(c.epoch_progress(e), expect) << e;
  }
}

TEST(Application, GradientStatisticsAreLinearInTheBatchBetweenValidatedSizes) {
  const Application& c = catalog().get("cifar10");
  const std::vector<double> r256 = csv_row(traces_dir() + "/cifar10/validation-256.csv", 7);
  const std::vector<double> r512 = csv_row(traces_dir() + "/cifar10/validation-512.csv", 7);
  EXPECT_DOUBLE_EQ(c.grad_stats(256, 7).sqr, r256[3]);
  EXPECT_DOUBLE_EQ(c.grad_stats(256, 7).var, r256[4]);
  EXPECT_NEAR(c.grad_stats(320, 7).sqr, 0.75 * r256[3] + 0.25 * r512[3], 1e-12 * std::fabs(r512[3]));
  EXPECT_NEAR(c.grad_stats(320, 7).var, 0.75 * r256[4] + 0.25 * r512[4], 1e-12 * std::fabs(r512[4]));
  // Clamped outside the validated range.
  EXPECT_EQ(c.grad_stats(100000, 7).sqr, c.grad_stats(4096, 7).sqr);
  // The Optimus oracle's iterations, from the same files.
  EXPECT_DOUBLE_EQ(c.iterations(256, 7), r256[1]);
}

TEST(Application, PlacementsAreRotatedToTheirSmallestForm) {
  EXPECT_EQ(Application::canonical_placement({4, 0, 2, 4}), (std::vector<int>{2, 4, 4}));
  EXPECT_EQ(Application::canonical_placement({3, 1, 2}), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(Application::canonical_placement({2, 1, 3}), (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(Application::canonical_placement({0, 0}), (std::vector<int>{}));
}

TEST(Application, ExactPlacementsUseTheirRows) {
  // placements.csv of bert: the first rows are placement 1 at local_bsz 4, 6, 8.
  const Application& b = catalog().get("bert");
  const std::vector<double> r0 = csv_row(traces_dir() + "/bert/placements.csv", 0);
  const std::vector<double> r1 = csv_row(traces_dir() + "/bert/placements.csv", 1);
  ASSERT_EQ(r0[0], 1);
  ASSERT_EQ(r0[1], 4);
  ASSERT_EQ(r1[1], 6);
  const StepTimes t4 = b.step_times({1}, 4);
  EXPECT_EQ(t4.source, StepSource::kPlacement);
  EXPECT_DOUBLE_EQ(t4.step, r0[2]);
  EXPECT_DOUBLE_EQ(t4.sync, r0[3]);
  const StepTimes t5 = b.step_times({0, 1, 0}, 5);
  EXPECT_DOUBLE_EQ(t5.step, 0.5 * (r0[2] + r1[2]));
  // A rotation of a table placement is the same placement.
  const StepTimes a = b.step_times({4, 2, 4}, 8), c = b.step_times({2, 4, 4}, 8);
  EXPECT_EQ(a.source, StepSource::kPlacement);
  EXPECT_EQ(a.step, c.step);
}

TEST(Application, LargerPlacementsAreInterpolatedAndUnmeasuredOnesModelled) {
  const Application& c = catalog().get("cifar10");
  // Six nodes of 4 GPUs is not in placements.csv but inside the scalability data.
  const StepTimes s = c.step_times({4, 4, 4, 4, 4, 4}, 128);
  EXPECT_EQ(s.source, StepSource::kScattered);
  EXPECT_GT(s.step, s.sync);
  EXPECT_GT(s.sync, 0);
  // Eight GPUs on one node: no measurement anywhere near (a what-if cluster).
  const StepTimes m = c.step_times({8}, 128);
  EXPECT_EQ(m.source, StepSource::kModel);
  EXPECT_GT(m.step, c.step_times({4}, 128).step * 0.5);
  StepTimeCache cache(c);
  EXPECT_EQ(cache.get({8}, 128).step, m.step);
  EXPECT_EQ(cache.get({8}, 128).step, m.step);
  EXPECT_EQ(cache.model_lookups(), 1);
}

TEST(Application, FixedBatchSplitIsTheArtifacts) {
  const Application& c = catalog().get("cifar10");  // m_max 1024, M0 128, M_max 4096
  BatchConfig b = c.split_batch(4096, 2, false);
  EXPECT_EQ(b.atomic_batch, 1024);
  EXPECT_EQ(b.accum_steps, 1);
  b = c.split_batch(2048, 1, true);  // one GPU: at least one accumulation step
  EXPECT_EQ(b.atomic_batch, 1024);
  EXPECT_EQ(b.accum_steps, 1);
  b = c.split_batch(128, 1, true);
  EXPECT_EQ(b.atomic_batch, 64);
  EXPECT_EQ(b.accum_steps, 1);
  b = c.split_batch(2048, 6, false);  // ceil(2048 / 6) = 342
  EXPECT_EQ(b.atomic_batch, 342);
  EXPECT_EQ(b.accum_steps, 0);
  EXPECT_EQ(c.cap_atomic(1024, 6, 0), 682);  // 6 x 1024 would exceed M_max = 4096
}

}  // namespace
}  // namespace pollux::sim

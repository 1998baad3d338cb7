// A hint's model as the plugin uses it: speedup within the job's range, and
// the view shown in the comment.
#include <gtest/gtest.h>

#include "sched/job_model.h"
#include "pollux/efficiency.h"
#include "spool/spool_test_util.h"

namespace pollux::sched {
namespace {

TEST(JobModel, NoModelUntilTheHintHasOne) {
  std::string why;
  EXPECT_FALSE(model_from_hint(test::minimal_hint(), &why));
  EXPECT_NE(why.find("throughput"), std::string::npos);
  Hint h = test::full_hint();
  h.grad.reset();
  EXPECT_FALSE(model_from_hint(h, &why));
  EXPECT_NE(why.find("gradient"), std::string::npos);
}

TEST(JobModel, AFullHintGivesASpeedupOfOneOnOneGpu) {
  const auto m = model_from_hint(test::full_hint());
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ((*m->speedup)(1, 1), 1.0);
  EXPECT_GT((*m->speedup)(1, 4), 1.0);
  EXPECT_EQ(m->max_gpus_by_batch(), 1024 / 8);
}

TEST(JobModel, SpeedupIsZeroOutsideTheRange) {
  const auto m = model_from_hint(test::full_hint());
  const SpeedupFn s = range_speedup(m, ElasticRange{2, 3, 2});
  EXPECT_GT(s(2, 4), 0);
  EXPECT_GT(s(3, 3), 0);
  EXPECT_EQ(s(1, 2), 0);  // too few nodes
  EXPECT_EQ(s(4, 4), 0);  // too many nodes
  EXPECT_EQ(s(2, 6), 0);  // 3 GPUs per node > 2
  EXPECT_EQ(s(2, 3), 0);  // not the same on every node
  EXPECT_EQ(s(2, 0), 0);
  EXPECT_DOUBLE_EQ(s(2, 4), (*m->speedup)(2, 4));
}

TEST(JobModel, WithoutAModelTheSpeedupIsLinearWithinTheRange) {
  const SpeedupFn s = range_speedup(std::nullopt, ElasticRange{1, 4, 4});
  EXPECT_EQ(s(1, 1), 1);
  EXPECT_EQ(s(2, 8), 8);
  EXPECT_EQ(s(1, 8), 0);
}

TEST(JobModel, TheViewIsWhatTheAgentWillRun) {
  const Hint h = test::full_hint();
  const auto m = model_from_hint(h);
  const JobView v = view_at(m, 1, 4);
  EXPECT_TRUE(v.has_model);
  EXPECT_EQ(v.gpus, 4);
  EXPECT_EQ(v.nodes, 1);
  const BatchConfig cfg = m->speedup->model().optimize(1, 4, h.limits);
  EXPECT_DOUBLE_EQ(v.goodput, cfg.goodput);
  EXPECT_EQ(v.batch, cfg.total_batch(4));
  EXPECT_EQ(v.micro_steps, cfg.accum_steps + 1);
  EXPECT_LE(v.batch, h.limits.max_batch);
  EXPECT_GT(v.efficiency, 0);
  EXPECT_LE(v.efficiency, 1);
  EXPECT_DOUBLE_EQ(v.speedup, (*m->speedup)(1, 4));
  EXPECT_DOUBLE_EQ(v.noise_scale, gradient_noise_scale(*h.grad, h.limits.init_batch));
}

TEST(JobModel, TheViewWithoutAModelIsLinear) {
  const JobView v = view_at(std::nullopt, 2, 4);
  EXPECT_FALSE(v.has_model);
  EXPECT_EQ(v.speedup, 8);
  EXPECT_EQ(view_at(std::nullopt, 0, 0).gpus, 0);
}

}  // namespace
}  // namespace pollux::sched

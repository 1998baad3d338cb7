// The agent's checkpointed state: exact round trip and clear rejections.
#include <gtest/gtest.h>

#include "agent_state.h"

namespace pollux::agent_detail {
namespace {

AgentState sample_state() {
  AgentState s;
  s.job_id = 31;
  s.restart_count = 2;
  s.step = 1234;
  s.samples = 78976;
  s.progress = 1001.125;
  s.time = 1700000123.25;
  s.limits = BatchLimits{64, 2048, 4, 512, true};
  s.config = HintConfig{2, 4, 128, 1};
  s.estimator_init_batch = 64;
  s.estimator = GradNoiseEstimator::State{0.1 / 3, 0.75, 2.0 / 7, 0.75, 812};
  s.perf = PerfParams{0.01, 0.0002, 0.02, 0.001, 0.005, 0.0005, 1.25};
  ProfileEntry e;
  e.nodes = 1;
  e.replicas = 4;
  e.atomic_batch = 128;
  for (int i = 0; i < 40; ++i) e.add(0.01 + i * 1e-5, 0.02 + i * 1e-5);
  s.profile.push_back(e);
  return s;
}

TEST(AgentState, RoundTripsExactly) {
  const AgentState s = sample_state();
  const std::string text = emit_agent_state(s);
  const AgentState r = parse_agent_state(text);
  EXPECT_EQ(emit_agent_state(r), text);
  EXPECT_EQ(r.step, s.step);
  EXPECT_EQ(r.samples, s.samples);
  EXPECT_EQ(r.progress, s.progress);
  EXPECT_EQ(r.estimator.sqr_biased, s.estimator.sqr_biased);
  EXPECT_EQ(r.estimator.updates, s.estimator.updates);
  ASSERT_TRUE(r.perf);
  EXPECT_EQ(r.perf->to_array(), s.perf->to_array());
  ASSERT_EQ(r.profile.size(), 1u);
  EXPECT_EQ(r.profile[0].steps, 40);
  EXPECT_EQ(r.profile[0].next, s.profile[0].next);
  EXPECT_EQ(r.profile[0].step_times, s.profile[0].step_times);
  EXPECT_EQ(r.profile[0].sample().step_time, s.profile[0].sample().step_time);
}

TEST(AgentState, RejectsDamage) {
  const std::string text = emit_agent_state(sample_state());
  auto rejects = [&](const std::string& from, const std::string& to, const std::string& reason) {
    std::string t = text;
    const auto pos = t.find(from);
    ASSERT_NE(pos, std::string::npos) << from;
    t.replace(pos, from.size(), to);
    try {
      parse_agent_state(t);
      FAIL() << "accepted: " << to;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  rejects("version: 1", "version: 7", "unsupported agent state version 7");
  rejects("step: 1234", "step: -3", "step: -3 is out of range");
  rejects("samples: 78976\n", "", "samples: missing");
  rejects("updates: 812", "updates: lots", "estimator.updates: 'lots' is not an integer");
  rejects("step_times: [", "step_times: [-", "profile[0].step_times: '-0.02");
  rejects("next: 9,", "next: 99999,", "profile[0].next: 99999 is out of range");
  rejects("gamma: 1.25", "gamma: 11", "perf.gamma: 11 is out of range");
  rejects("progress: 1001.125", "progress: 1001.125\nextra: 1", "extra: unknown key");
  EXPECT_THROW(parse_agent_state("{"), std::runtime_error);
}

}  // namespace
}  // namespace pollux::agent_detail

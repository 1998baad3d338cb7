// The agent's checkpointed state: exact round trip and clear rejections.
#include <gtest/gtest.h>

#include <tuple>

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
  s.save_seconds = 3.75;
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
  EXPECT_EQ(r.save_seconds, s.save_seconds);
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
  rejects("save_seconds: 3.75", "save_seconds: -1", "save_seconds: -1 is out of range");
  rejects("save_seconds: 3.75", "save_seconds: nan", "save_seconds: 'nan' is not finite");
  // Optional: a checkpoint of an agent older than the field reads as "not measured".
  std::string old = text;
  old.erase(old.find("save_seconds: 3.75\n"), std::string("save_seconds: 3.75\n").size());
  EXPECT_EQ(parse_agent_state(old).save_seconds, 0);
  EXPECT_THROW(parse_agent_state("{"), std::runtime_error);
}

// A state measured on an H100 after runs on two other types.
AgentState typed_state() {
  AgentState s = sample_state();
  s.gpu_type = "h100";
  s.type_perf = {HintTypePerf{"a100", PerfParams{0.02, 0.0004, 0.02, 0.001, 0.005, 0.0005, 1.25}},
                 HintTypePerf{"v100", PerfParams{0.04, 0.0008, 0.02, 0.001, 0.005, 0.0005, 1.5}}};
  return s;
}

TEST(AgentState, TypesRoundTripAndAreRangeChecked) {
  const AgentState s = typed_state();
  const std::string text = emit_agent_state(s);
  const AgentState r = parse_agent_state(text);
  EXPECT_EQ(emit_agent_state(r), text);
  EXPECT_EQ(r.gpu_type, "h100");
  ASSERT_EQ(r.type_perf.size(), 2u);
  EXPECT_EQ(r.type_perf[1].gpu_type, "v100");
  EXPECT_EQ(r.type_perf[1].perf.to_array(), s.type_perf[1].perf.to_array());
  EXPECT_EQ(emit_agent_state(sample_state()).find("gpu_type"), std::string::npos);  // untyped: as before
  for (const auto& [from, to, reason] :
       {std::tuple{"gpu_type: h100", "gpu_type: H100", "gpu_type: 'H100' is not a GPU type name"},
        std::tuple{"- gpu_type: v100", "- gpu_type: a100", "type_perf[1].gpu_type: 'a100' repeats"},
        std::tuple{"- gpu_type: a100", "- gpu_type: h100", "type_perf[0].gpu_type: 'h100' is the current"}}) {
    std::string t = text;
    t.replace(t.find(from), std::string(from).size(), to);
    try {
      parse_agent_state(t);
      ADD_FAILURE() << "accepted: " << to;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  }
}

TEST(SwitchGpuType, TheSameOrAnUnknownTypeKeepsProfileAndFit) {
  AgentState s = typed_state();
  EXPECT_FALSE(switch_gpu_type(s, "h100"));
  EXPECT_EQ(s.profile.size(), 1u);
  EXPECT_TRUE(s.perf);
  AgentState old = sample_state();  // an agent older than types
  EXPECT_FALSE(switch_gpu_type(old, "h100"));
  EXPECT_EQ(old.gpu_type, "h100");
  EXPECT_EQ(old.profile.size(), 1u);
}

TEST(SwitchGpuType, AnotherTypeKeepsTheFitAndStartsItsOwnProfile) {
  AgentState s = typed_state();
  const PerfParams h100 = *s.perf, a100 = s.type_perf[0].perf;
  // Onto a type the job never ran on: no fit, no profile; H100's fit kept.
  AgentState t = s;
  EXPECT_TRUE(switch_gpu_type(t, "l40s"));
  EXPECT_EQ(t.gpu_type, "l40s");
  EXPECT_FALSE(t.perf);
  EXPECT_TRUE(t.profile.empty());
  ASSERT_EQ(t.type_perf.size(), 3u);
  EXPECT_EQ(t.type_perf[2].gpu_type, "h100");
  EXPECT_EQ(t.type_perf[2].perf.to_array(), h100.to_array());
  // Back onto a type it ran on: that type's fit resumes and leaves type_perf.
  EXPECT_TRUE(switch_gpu_type(s, "a100"));
  ASSERT_TRUE(s.perf);
  EXPECT_EQ(s.perf->to_array(), a100.to_array());
  EXPECT_TRUE(s.profile.empty());
  ASSERT_EQ(s.type_perf.size(), 2u);
  EXPECT_EQ(s.type_perf[0].gpu_type, "v100");
  EXPECT_EQ(s.type_perf[1].gpu_type, "h100");
  EXPECT_NO_THROW(parse_agent_state(emit_agent_state(s)));
}

// A return to a type resumes its profile samples with its fit: they were
// measured on that type and stay valid there.
TEST(SwitchGpuType, AReturnToATypeResumesItsProfile) {
  AgentState s = typed_state();
  const std::vector<ProfileEntry> h100 = s.profile;
  EXPECT_TRUE(switch_gpu_type(s, "l40s"));
  EXPECT_TRUE(s.profile.empty());
  ASSERT_EQ(s.type_profiles.size(), 1u);
  EXPECT_EQ(s.type_profiles[0].gpu_type, "h100");
  ProfileEntry e;
  e.nodes = 1;
  e.replicas = 2;
  e.atomic_batch = 64;
  e.add(0.05, 0.06);
  s.profile = {e};
  s.perf = PerfParams{};
  // The checkpoint on the L40S, read back: both profiles survive it.
  AgentState r = parse_agent_state(emit_agent_state(s));
  EXPECT_EQ(emit_agent_state(r), emit_agent_state(s));
  ASSERT_EQ(r.type_profiles.size(), 1u);
  EXPECT_EQ(r.type_profiles[0].profile[0].step_times, h100[0].step_times);
  EXPECT_TRUE(switch_gpu_type(r, "h100"));
  ASSERT_EQ(r.profile.size(), 1u);
  EXPECT_EQ(r.profile[0].replicas, h100[0].replicas);
  EXPECT_EQ(r.profile[0].steps, h100[0].steps);
  EXPECT_EQ(r.profile[0].step_times, h100[0].step_times);
  ASSERT_EQ(r.type_profiles.size(), 1u);
  EXPECT_EQ(r.type_profiles[0].gpu_type, "l40s");
  EXPECT_EQ(r.type_profiles[0].profile[0].replicas, 2);
  // The file refuses a profile of the current type or one named twice.
  const std::string text = emit_agent_state(r);
  for (const auto& [from, to, reason] :
       {std::tuple{"- gpu_type: l40s\n  profile", "- gpu_type: h100\n  profile", "type_profiles[0].gpu_type: 'h100' is the current"},
        std::tuple{"type_profiles:\n", "type_profiles:\n- gpu_type: l40s\n  profile: []\n", "type_profiles[1].gpu_type: 'l40s' repeats"}}) {
    std::string t = text;
    const auto pos = t.find(from);
    ASSERT_NE(pos, std::string::npos) << from << "\n" << text;
    t.replace(pos, std::string(from).size(), to);
    try {
      parse_agent_state(t);
      ADD_FAILURE() << "accepted: " << t;
    } catch (const std::runtime_error& err) {
      EXPECT_NE(std::string(err.what()).find(reason), std::string::npos) << err.what();
    }
  }
}

TEST(SwitchGpuType, KeepsAtMostTheHintsNumberOfTypes) {
  AgentState s = sample_state();
  s.gpu_type = "t0";
  for (int i = 1; i <= static_cast<int>(kHintMaxTypes) + 2; ++i) {
    EXPECT_TRUE(switch_gpu_type(s, "t" + std::to_string(i)));
    s.perf = PerfParams{};  // each run fits its type
    s.profile = sample_state().profile;  // and profiles it
  }
  ASSERT_EQ(s.type_perf.size(), kHintMaxTypes);
  EXPECT_EQ(s.type_perf.front().gpu_type, "t2");  // the oldest went first
  EXPECT_EQ(s.type_perf.back().gpu_type, "t17");
  ASSERT_EQ(s.type_profiles.size(), kHintMaxTypes);
  EXPECT_EQ(s.type_profiles.front().gpu_type, "t2");
  EXPECT_EQ(s.type_profiles.back().gpu_type, "t17");
  EXPECT_NO_THROW(parse_agent_state(emit_agent_state(s)));
}

}  // namespace
}  // namespace pollux::agent_detail

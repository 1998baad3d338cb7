// sched/pollux on typed GRES (sched/gpu_types.h, round.h): the cluster's
// GPU types, the one rule that maps a hint's type onto them, each job's
// model per type, the seed and learning of the types' speeds, what the
// policy is told and what the SystemComment shows, and that a cluster of
// one type is scheduled exactly as an untyped one.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>

#include "sched/gpu_types.h"
#include "sched/params.h"
#include "sched/round.h"
#include "sched_test_util.h"
#include "pollux/throughput.h"
#include "spool/spool_test_util.h"

namespace pollux::sched {
namespace {

using test::on;
using test::ScriptedPolicy;

constexpr double kNow = 1700001000;

TEST(GpuTypes, NodesAreGroupedBySortedTypeNames) {
  const GpuTypes t = group_gpu_types({"h100", "a100", "", "h100"});
  EXPECT_EQ(t.names, (std::vector<std::string>{"", "a100", "h100"}));
  EXPECT_EQ(t.of_node, (std::vector<int>{2, 1, 0, 2}));
  EXPECT_EQ(group_gpu_types({}).names.size(), 0u);
}

TEST(GpuTypes, AHintsTypeNameIsMatchedOntoSlurmsTypes) {
  const std::vector<std::string> types = {"a100", "h100", "h100_80gb", "L40S"};
  EXPECT_EQ(match_gpu_type("A100", types), 0);                    // equal, ignoring case
  EXPECT_EQ(match_gpu_type("l40s", types), 3);
  EXPECT_EQ(match_gpu_type("NVIDIA A100-SXM4-40GB", types), 0);   // one token
  EXPECT_EQ(match_gpu_type("NVIDIA H100 80GB HBM3", types), 2);   // the longest run of tokens
  EXPECT_EQ(match_gpu_type("NVIDIA H100 PCIe", types), 1);
  EXPECT_EQ(match_gpu_type("nvidia_h100_80gb_hbm3", types), 2);   // already normalised
  EXPECT_EQ(match_gpu_type("NVIDIA GeForce RTX 4090", types), -1);
  EXPECT_EQ(match_gpu_type("a1000", types), -1);                  // a token, not a prefix
  EXPECT_EQ(match_gpu_type("", types), -1);
  EXPECT_EQ(match_gpu_type("", {"", "a100"}), -1);                // untyped GPUs are named by no hint
}

TEST(GpuTypes, SpeedsAreSeededByTheAdministratorAndDefaultToOne) {
  EXPECT_EQ(type_speed_seed({"", "A100", "h100"}, {{"a100", 1.5}, {"H100", 3}, {"v100", 0.5}}),
            (std::vector<double>{1, 1.5, 3}));
}

JobModel model_of(const Hint& h) { return *model_from_hint(h); }

TEST(GpuTypes, AHintsFitBelongsToTheTypeItNamesElseWhereTheJobRuns) {
  const std::vector<std::string> types = {"a100", "h100"};
  JobModel m = model_of(pollux::test::full_hint());
  PerfParams other = m.perf;
  other.alpha_c *= 3;
  // No type named: the type of the nodes it runs on, or none.
  EXPECT_FALSE(fits_by_type(m, types, -1)[0] || fits_by_type(m, types, -1)[1]);
  EXPECT_TRUE(fits_by_type(m, types, 1)[1]);
  EXPECT_FALSE(fits_by_type(m, types, 1)[0]);
  // Named: that type, wherever it runs; type_perf gives the others, the
  // hint's own fit wins on its own type.
  m.gpu_type = "NVIDIA A100-SXM4-40GB";
  m.type_perf = {{"NVIDIA H100 80GB HBM3", other}, {"NVIDIA A100", other}, {"Tesla V100", other}};
  const auto fits = fits_by_type(m, types, 1);
  ASSERT_TRUE(fits[0] && fits[1]);
  EXPECT_EQ(fits[0]->alpha_c, m.perf.alpha_c);
  EXPECT_EQ(fits[1]->alpha_c, other.alpha_c);
  EXPECT_FALSE(fits_by_type(std::nullopt, types, 0)[0]);
}

TEST(GpuTypes, TheModelKeepsTheHintsTypeNames) {
  Hint h = pollux::test::full_hint();
  h.gpu_type = "nvidia_a100-sxm4-40gb";
  h.type_perf = {HintTypePerf{"nvidia_h100_80gb_hbm3", *h.perf}};
  const JobModel m = model_of(h);
  EXPECT_EQ(m.gpu_type, h.gpu_type);
  ASSERT_EQ(m.type_perf.size(), 1u);
  EXPECT_EQ(m.type_perf[0].first, "nvidia_h100_80gb_hbm3");
  const auto fits = fits_by_type(m, {"a100", "h100", "v100"}, -1);
  EXPECT_TRUE(fits[0] && fits[1]);
  EXPECT_FALSE(fits[2]);
}

TEST(GpuTypes, AJobsSpeedupsOnEachTypeShareOneBase) {
  const std::vector<std::string> types = {"a100", "h100"};
  const TypeRatios ratios({1.0, 2.5});
  const ElasticRange range{1, 2, 4};
  const JobModel m = model_of(pollux::test::full_hint());
  // Fitted on a100 (where it runs), estimated on h100: faster there, and
  // the base is its best one-GPU goodput (on h100).
  const TypedJobModel t = typed_job_model(m, range, types, 0, ratios);
  ASSERT_TRUE(t.speedups[0] && t.speedups[1]);
  EXPECT_EQ(t.sources[0], TypeModelSource::kFitted);
  EXPECT_EQ(t.sources[1], TypeModelSource::kEstimated);
  EXPECT_NEAR(t.speedups[1](1, 1), 1.0, 1e-9);
  EXPECT_LT(t.speedups[0](1, 1), 0.9);
  EXPECT_GT(t.speedups[1](1, 4), t.speedups[0](1, 4));
  EXPECT_EQ(t.speedups[1](3, 3), 0);  // outside its range
  EXPECT_EQ(t.speedups[1](1, 8), 0);
  ASSERT_TRUE(t.models[0] && t.models[1]);
  EXPECT_GT(view_at(t.models[1], 1, 1).goodput, view_at(t.models[0], 1, 1).goodput);
  // Without a model: linear, scaled by the speeds (the fastest GPU = 1).
  const TypedJobModel none = typed_job_model(std::nullopt, range, types, -1, ratios);
  EXPECT_NEAR(none.speedups[1](2, 8), 8, 1e-9);
  EXPECT_NEAR(none.speedups[0](2, 8), 8 / 2.5, 1e-9);
  EXPECT_EQ(none.speedups[0](3, 3), 0);
  // A model measured on no type it can be placed by: its own on every type.
  const TypedJobModel unplaced = typed_job_model(m, range, types, -1, ratios);
  const SpeedupFn own = range_speedup(m, range);
  EXPECT_EQ(unplaced.speedups[0](1, 4), own(1, 4));
  EXPECT_EQ(unplaced.speedups[1](1, 4), own(1, 4));
  EXPECT_FALSE(unplaced.models[0] || unplaced.models[1]);
}

TEST(GpuTypes, WithoutUniformPlacementsEveryTypesSpeedupCountsEverySize) {
  // RoundRules::uniform_placements = false (pollux-sim's paper runs): the
  // per-type speedups count every size, as the untyped speedup then does
  // (model_speedup); the default (sched/pollux's) only the range's
  // uniform ones. 2 nodes x 3 GPUs is not uniform.
  const std::vector<std::string> types = {"a100", "h100"};
  const TypeRatios ratios({1.0, 2.5});
  const ElasticRange range{1, 2, 4};
  const JobModel m = model_of(pollux::test::full_hint());
  const TypedJobModel uniform = typed_job_model(m, range, types, 0, ratios);
  const TypedJobModel any = typed_job_model(m, range, types, 0, ratios, false);
  for (int t = 0; t < 2; ++t) {
    ASSERT_TRUE(any.speedups[t]);
    EXPECT_EQ(uniform.speedups[t](2, 3), 0);
    EXPECT_GT(any.speedups[t](2, 3), 0);
    EXPECT_EQ(any.speedups[t](1, 4), uniform.speedups[t](1, 4));  // a uniform size: the same
  }
  EXPECT_GT(any.speedups[1](2, 3), any.speedups[0](2, 3));
  // Without a model: linear, scaled by the speeds, at every size.
  EXPECT_NEAR(typed_job_model(std::nullopt, range, types, -1, ratios, false).speedups[0](2, 3), 3 / 2.5, 1e-9);
  // A model measured on no type it can be placed by: its own, at every size.
  const TypedJobModel unplaced = typed_job_model(m, range, types, -1, ratios, false);
  EXPECT_EQ(unplaced.speedups[1](2, 3), (*m.speedup)(2, 3));
  EXPECT_EQ(typed_job_model(m, range, types, -1, ratios).speedups[1](2, 3), 0);
}

TEST(GpuTypes, TheSpeedsAreLearntOnceFromEachJobThatRanOnTwoTypes) {
  TypeSpeedLearner learner;
  const std::vector<std::string> types = {"a100", "h100"};
  const TypeRatios& r = learner.ratios(types, {{"h100", 2}});
  EXPECT_NEAR(r.grad_time_ratio(0, 1), 0.5, 1e-12);
  JobModel m = model_of(pollux::test::full_hint());
  PerfParams fast = m.perf;
  fast.alpha_c /= 4;
  fast.beta_c /= 4;
  m.gpu_type = "a100";
  m.type_perf = {{"h100", fast}};
  const auto fits = fits_by_type(m, types, -1);
  learner.learn(7, fits, m.limits);
  learner.learn(7, fits, m.limits);  // once per job
  EXPECT_EQ(r.observations(0, 1), 1);
  EXPECT_NEAR(r.grad_time_ratio(0, 1), std::sqrt(0.5 * 0.25), 1e-9);  // the prior counts as one observation
  learner.forget_others({});
  learner.learn(7, fits, m.limits);  // a job forgotten is a new one
  EXPECT_EQ(r.observations(0, 1), 2);
  // Another seed: the observations are kept, the prior is the new seed's.
  const TypeRatios& r3 = learner.ratios(types, {{"h100", 3}});
  EXPECT_EQ(r3.observations(0, 1), 2);
  EXPECT_NEAR(r3.grad_time_ratio(0, 1), std::cbrt(1.0 / 3 * 0.25 * 0.25), 1e-9);
  learner.learn(7, fits, m.limits);  // still seen
  EXPECT_EQ(r3.observations(0, 1), 2);
  // A type added: the pair between the types still present is kept, at
  // its new indices; a type gone takes its pairs with it.
  const TypeRatios& r4 = learner.ratios({"a100", "b200", "h100"}, {{"h100", 2}});
  EXPECT_EQ(r4.observations(0, 2), 2);
  EXPECT_EQ(r4.observations(0, 1) + r4.observations(1, 2), 0);
  learner.learn(7, fits_by_type(m, {"a100", "b200", "h100"}, -1), m.limits);  // still seen, at (0, 2)
  EXPECT_EQ(r4.observations(0, 2), 2);
  EXPECT_EQ(learner.ratios({"a100", "b200"}, {}).observations(0, 1), 0);
}

TEST(GpuTypes, TheAdministratorSeedsTheSpeedsInSchedulerParameters) {
  ParamsResult r = parse_params("pollux_gpu_type_speeds=a100=1:h100=2.5:L40S=0.8");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.params.gpu_type_speeds, (GpuTypeSpeeds{{"L40S", 0.8}, {"a100", 1}, {"h100", 2.5}}));
  EXPECT_NE(describe(r.params).find("pollux_gpu_type_speeds=L40S=0.8:a100=1:h100=2.5"), std::string::npos);
  EXPECT_TRUE(Params{}.gpu_type_speeds.empty());
  EXPECT_EQ(describe(Params{}).find("gpu_type_speeds"), std::string::npos);
  for (const char* bad : {"h100", "h100=0", "h100=-1", "=2", "h100=2:", "h 100=2", "h100=x", "h100=1e9"}) {
    r = parse_params(std::string("pollux_gpu_type_speeds=") + bad);
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_NE(r.errors[0].find("TYPE=SPEED"), std::string::npos) << r.errors[0];
    EXPECT_TRUE(r.params.gpu_type_speeds.empty());
  }
}

TEST(GpuTypes, TheCommentShowsTheTypeAndTheGoodputOnEachAndOldCommentsStillParse) {
  JobState s;
  s.range = {1, 4, 4};
  s.phase = Phase::kRunning;
  s.alloc = {1, 2, "n3"};
  s.since = kNow;
  JobView v;
  v.gpus = 2;
  v.nodes = 1;
  v.gpu_type = "h100";
  v.goodput_by_type = {{"", 50}, {"a100", 120.4}, {"h100", 310}};
  const std::string c = format_comment(v, s);
  EXPECT_NE(c.find(" type=h100 goodput_by_type=untyped:50,a100:120.4,h100:310"), std::string::npos) << c;
  ASSERT_TRUE(parse_comment(c));
  EXPECT_EQ(parse_comment(c)->alloc, s.alloc);
  const auto t = parse_comment_types(c);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->gpu_type, "h100");
  EXPECT_EQ(t->goodput_by_type, v.goodput_by_type);
  // An untyped cluster's comment, and one written before types: none.
  const std::string old = format_comment(JobView{}, s);
  EXPECT_EQ(old.find("type="), std::string::npos);
  EXPECT_TRUE(parse_comment(old));
  EXPECT_TRUE(parse_comment_types(old)->goodput_by_type.empty());
  EXPECT_FALSE(parse_comment_types("pollux: gpus=1 goodput_by_type=a100:x | state=held"));
  // A name that would split the comment is escaped, never cut.
  v.gpu_type = "a,b c";
  v.goodput_by_type.clear();
  EXPECT_NE(format_comment(v, s).find(" type=a?b?c "), std::string::npos);
}

// Nodes n1, n2 of type a100 and n3, n4 of h100 (4 GPUs each).
Snapshot typed_snapshot(std::vector<std::string> types = {"a100", "h100"}) {
  Snapshot snap;
  snap.now = kNow;
  snap.nodes = test::four_nodes();
  snap.gpu_types = types;
  if (types.size() > 1) snap.nodes[2].type = snap.nodes[3].type = 1;
  return snap;
}

ElasticJobSnapshot pending(std::uint32_t id, ElasticRange range = {1, 2, 4}) {
  ElasticJobSnapshot j;
  j.job_id = id;
  j.uid = 1000;
  j.submit_time = kNow - 100;
  j.range = range;
  j.held_by_pollux = true;
  return j;
}

JobInput input_with(std::optional<JobModel> model) {
  JobInput in;
  in.model = std::move(model);
  in.max_profiled_replicas = 8;
  in.resize_signal = SIGUSR1;
  in.hint_restarts = 0;
  return in;
}

TEST(TypedRound, ThePolicySeesEachJobsSpeedupOnEachTypeAndTheNodesTypes) {
  Snapshot snap = typed_snapshot();
  JobModel m = model_of(pollux::test::full_hint());
  m.gpu_type = "NVIDIA A100-SXM4-40GB";
  snap.jobs = {pending(7)};
  Params params;
  params.gpu_type_speeds = {{"h100", 2.5}};
  ScriptedPolicy policy;
  policy.answer = {on({{2, 2}})};
  const RoundResult r = plan_round(snap, {input_with(m)}, params, &policy);
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(policy.seen_nodes.size(), 4u);
  EXPECT_EQ(policy.seen_nodes[0].type, 0);
  EXPECT_EQ(policy.seen_nodes[3].type, 1);
  const JobInfo& j = policy.seen_jobs.at(0);
  ASSERT_EQ(j.speedup_by_type.size(), 2u);
  EXPECT_NEAR(j.speedup_by_type[1](1, 1), 1.0, 1e-9);  // estimated faster on h100: the base
  EXPECT_LT(j.speedup_by_type[0](1, 1), 0.9);
  // The SystemComment: the type it is promised, its goodput on each.
  const JobDecision& d = r.decisions.at(0);
  EXPECT_EQ(d.view.gpu_type, "h100");
  const auto t = parse_comment_types(d.comment);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->gpu_type, "h100");
  ASSERT_EQ(t->goodput_by_type.size(), 2u);
  EXPECT_EQ(t->goodput_by_type[0].first, "a100");
  EXPECT_GT(t->goodput_by_type[1].second, t->goodput_by_type[0].second);
  EXPECT_DOUBLE_EQ(d.view.goodput, view_at(typed_job_model(m, {1, 2, 4}, snap.gpu_types, -1,
                                                           TypeRatios({1, 2.5})).models[1], 1, 2).goodput);
}

// Issue 34: without pollux_gpu_type_speeds, a job measured on one type sees
// a type it has not run on as faster (TypeRatios::kExploreSpeedup), until
// some job has run on both; with the speeds given, or once learnt, it sees
// the ratio.
TEST(TypedRound, WithoutSpeedsATypeNoJobRanOnIsExploredUntilLearnt) {
  EXPECT_EQ(type_speed_known({"a100", "h100", "v100"}, {{"H100", 2}}), (std::vector<bool>{false, true, false}));
  JobModel m = model_of(pollux::test::full_hint());
  m.gpu_type = "a100";
  auto seen = [&](const Params& params, const TypeRatios* ratios) {
    Snapshot snap = typed_snapshot();
    snap.jobs = {pending(7)};
    ScriptedPolicy policy;
    policy.answer = {on({{0, 2}})};
    const RoundResult r = plan_round(snap, {input_with(m)}, params, &policy, false, ratios);
    EXPECT_TRUE(r.error.empty()) << r.error;
    const JobInfo& j = policy.seen_jobs.at(0);
    return std::make_pair(j.speedup_by_type.at(0)(1, 1), j.speedup_by_type.at(1)(1, 1));
  };
  const auto [a, h] = seen(Params{}, nullptr);
  EXPECT_NEAR(h, 1.0, 1e-9);  // the base: h100 looks faster
  EXPECT_LT(a, 0.9);
  Params told;
  told.gpu_type_speeds = {{"a100", 1}, {"h100", 1}};
  const auto [a1, h1] = seen(told, nullptr);
  EXPECT_DOUBLE_EQ(a1, h1);
  // A job that ran on both at the same speed: the pair is explored.
  TypeSpeedLearner learner;
  Snapshot snap = typed_snapshot();
  snap.jobs = {pending(8)};
  JobModel both = m;
  both.type_perf = {{"h100", m.perf}};
  const TypeRatios* r = learn_type_ratios(snap, {input_with(both)}, Params{}, learner);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->explored(0, 1));
  const auto [a2, h2] = seen(Params{}, r);
  EXPECT_DOUBLE_EQ(a2, h2);
}

TEST(TypedRound, APlacementAcrossTypesIsRefused) {
  Snapshot snap = typed_snapshot();
  snap.jobs = {pending(7)};
  ScriptedPolicy policy;
  policy.answer = {on({{1, 2}, {2, 2}})};
  const RoundResult r = plan_round(snap, {input_with(std::nullopt)}, Params{}, &policy);
  EXPECT_NE(r.error.find("spans GPU types"), std::string::npos) << r.error;
  EXPECT_TRUE(r.decisions.at(0).state.alloc.empty());
}

TEST(TypedRound, PolluxPlacesAJobOnTheFasterTypeAndNeverAcrossTypes) {
  Snapshot snap = typed_snapshot();
  snap.jobs = {pending(7, {1, 2, 4}), pending(8, {1, 2, 4})};
  Params params;
  params.gpu_type_speeds = {{"h100", 3}};
  auto policy = make_policy("pollux", policy_options(params));
  const RoundResult r = plan_round(snap, {input_with(std::nullopt), input_with(std::nullopt)}, params, policy.get());
  ASSERT_TRUE(r.error.empty()) << r.error;
  for (const JobDecision& d : r.decisions) {
    ASSERT_FALSE(d.state.alloc.empty());
    const Placement p = to_placement(d.state.alloc, snap.nodes);
    for (const NodeShare& s : p) EXPECT_EQ(snap.nodes[s.node].type, placement_type(p, snap.nodes));
    EXPECT_NE(d.comment.find(" type="), std::string::npos) << d.comment;
  }
  // The first in line (FIFO among equals) gets the fast type.
  EXPECT_EQ(r.decisions[0].view.gpu_type, "h100");
}

TEST(TypedRound, AClusterOfOneTypeIsScheduledExactlyAsAnUntypedOne) {
  auto round = [](std::vector<std::string> types) {
    Snapshot snap = typed_snapshot(std::move(types));
    snap.jobs = {pending(7, {1, 4, 4}), pending(8, {1, 2, 2}), pending(9, {1, 4, 4})};
    Hint h = pollux::test::full_hint();
    std::vector<JobInput> inputs = {input_with(model_of(h)), input_with(std::nullopt), input_with(model_of(h))};
    inputs[2].model->gpu_type = "NVIDIA A100";
    Params params;
    params.gpu_type_speeds = {{"a100", 4}};
    auto policy = make_policy("pollux", policy_options(params));
    RoundResult r = plan_round(snap, inputs, params, policy.get());
    return std::make_pair(r, policy->last_report().fitness);
  };
  const auto [untyped, fit_u] = round({});
  const auto [typed, fit_t] = round({"a100"});
  EXPECT_EQ(fit_u, fit_t);
  ASSERT_EQ(untyped.decisions.size(), typed.decisions.size());
  for (std::size_t k = 0; k < typed.decisions.size(); ++k) {
    EXPECT_EQ(untyped.decisions[k].action, typed.decisions[k].action);
    EXPECT_EQ(untyped.decisions[k].state.alloc, typed.decisions[k].state.alloc);
    EXPECT_EQ(untyped.decisions[k].view.goodput, typed.decisions[k].view.goodput);
    EXPECT_EQ(untyped.decisions[k].comment.find("type="), std::string::npos);
  }
  // The typed one says the type (its one type) of a job given GPUs.
  EXPECT_NE(typed.decisions[0].comment.find(" type=a100"), std::string::npos) << typed.decisions[0].comment;
}

TEST(TypedRound, GpusAreKeptForARigidTypedJobOnNodesOfItsType) {
  Snapshot snap = typed_snapshot();
  snap.rigid_queue = {RigidRequest{1, 2, 0, "h100"}, RigidRequest{1, 0, 3, "a100"}};
  snap.jobs = {pending(7)};
  ScriptedPolicy policy;
  policy.answer = {{}};
  const RoundResult r = plan_round(snap, {input_with(std::nullopt)}, Params{}, &policy);
  EXPECT_EQ(r.reserved_gpus, 5);
  EXPECT_EQ(policy.seen_nodes[0].gpus, 1);  // 3 of the a100s' GPUs
  EXPECT_EQ(policy.seen_nodes[1].gpus, 4);
  EXPECT_EQ(policy.seen_nodes[2].gpus, 2);  // 2 GPUs of an h100 node
  EXPECT_EQ(policy.seen_nodes[3].gpus, 4);
  snap.rigid_queue = {RigidRequest{1, 2, 0, "v100"}};  // a type the cluster has not: nothing kept
  EXPECT_EQ(plan_round(snap, {input_with(std::nullopt)}, Params{}, &policy).reserved_gpus, 0);
}

TEST(GpuTypes, GpuCountsAreReadFromTresTypedOrNot) {
  EXPECT_EQ(gpus_in_tres("gres/gpu:h100:2")->type, "h100");
  EXPECT_EQ(gpus_in_tres("gres/gpu:h100:2")->gpus, 2);
  EXPECT_EQ(gpus_in_tres("gres:gpu:4")->type, "");
  EXPECT_EQ(gpus_in_tres("gpu:a100_80gb:1")->gpus, 1);
  for (const char* bad : {"gres/gpu:h100:0", "gres/gpu::2", "gres/gpu:h100:2,gres/foo:1", "gres/mps:2", "gres/gpu:x"})
    EXPECT_FALSE(gpus_in_tres(bad)) << bad;
  EXPECT_FALSE(untyped_gpus_per_node("gres/gpu:h100:2"));
  EXPECT_EQ(untyped_gpus_per_node("gres/gpu:2"), 2);
}

TEST(TypedRound, LearntRatiosAreUsedOnlyOnClustersOfSeveralTypes) {
  TypeSpeedLearner learner;
  Snapshot snap = typed_snapshot({"a100"});
  snap.jobs = {pending(7)};
  EXPECT_EQ(learn_type_ratios(snap, {input_with(std::nullopt)}, Params{}, learner), nullptr);
  snap = typed_snapshot();
  snap.jobs = {pending(7)};
  JobModel m = model_of(pollux::test::full_hint());
  PerfParams fast = m.perf;
  fast.alpha_c /= 2;
  fast.beta_c /= 2;
  m.gpu_type = "a100";
  m.type_perf = {{"h100", fast}};
  const TypeRatios* r = learn_type_ratios(snap, {input_with(m)}, Params{}, learner);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->observations(0, 1), 1);
}

}  // namespace
}  // namespace pollux::sched

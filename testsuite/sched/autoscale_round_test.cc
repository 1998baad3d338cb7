// Goodput auto-scaling in the periodic round (sched/autoscale_round.h): the
// target is libgoodput's autoscale_target (the band's desired_nodes, the
// running jobs' floor), the policy may use that many nodes
// (nodes held by others always, then the busiest on, booting, off), the
// idle nodes on beyond them are powered down and those within them still
// powered down resumed ahead of need; an arrivals round places new jobs
// within the target and powers nothing; nothing with it off. The round's
// utility, over the GPUs paid once it is carried out.
#include <gtest/gtest.h>

#include <csignal>

#include "sched/autoscale_round.h"
#include "sched_test_util.h"

namespace pollux::sched {
namespace {

using test::four_nodes;
using test::on;
using test::ScriptedPolicy;

constexpr double kNow = 1'000'000;

// A job that may use at most one node's 4 GPUs (range 1 node x 4 GPUs).
ElasticJobSnapshot one_node_job(std::uint32_t id) {
  ElasticJobSnapshot j;
  j.job_id = id;
  j.uid = 1000;
  j.submit_time = kNow - 100;
  j.range = {1, 1, 4};
  j.held_by_pollux = true;
  return j;
}

ElasticJobSnapshot running_on(std::uint32_t id, const Placement& p, const std::vector<NodeSnapshot>& nodes) {
  ElasticJobSnapshot j = one_node_job(id);
  j.held_by_pollux = false;
  j.running = true;
  j.start_time = kNow - 50;
  j.current = p;
  j.decided = p;
  JobState s;
  s.range = j.range;
  s.phase = Phase::kRunning;
  s.alloc = to_alloc(p, nodes);
  s.since = kNow - 50;
  j.state = s;
  return j;
}

struct Fixture : test::RoundFixture {
  Fixture() : RoundFixture(kNow) { params.autoscale = AutoscaleMode::kGoodput; }
  void add(ElasticJobSnapshot j) { RoundFixture::add(std::move(j), 4); }
  RoundResult run(bool arrivals = false) { return RoundFixture::run(true, arrivals); }
};

std::vector<std::size_t> idx(std::initializer_list<std::size_t> v) { return v; }

TEST(AutoscaleRound, TheTargetIsDesiredNodesAndTheRestIsNotUsable) {
  // A job worth one node (linear up to 4 GPUs) on 4 nodes on: utility
  // 4/16 = 0.25 below the band; 2 nodes (0.5) are the band's middle.
  Fixture f;
  f.add(running_on(7, on({{1, 4}}), f.snap.nodes));
  f.policy.answer = {on({{1, 4}})};
  const RoundResult r = f.run();
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.autoscale.active);
  EXPECT_EQ(r.autoscale.target, 2);
  EXPECT_EQ(r.autoscale.paid, 4);
  EXPECT_DOUBLE_EQ(r.autoscale.utility, 0.25);
  EXPECT_EQ(r.autoscale.why, "utility 0.25 below 0.35: 2 nodes worth running of 4 on");
  // The busiest node first (n2, its job's), then the first idle one.
  EXPECT_EQ(r.autoscale.usable, (std::vector<bool>{true, true, false, false}));
  ASSERT_EQ(f.policy.seen_nodes.size(), 4u);
  EXPECT_EQ(f.policy.seen_nodes[0].gpus, 4);
  EXPECT_EQ(f.policy.seen_nodes[2].gpus, 0);
  EXPECT_EQ(f.policy.seen_nodes[3].gpus, 0);
  EXPECT_EQ(r.autoscale.power_down, idx({2, 3}));
}

TEST(AutoscaleRound, NodesWhollyHeldByOthersAreNotInTheTarget) {
  // n1 and n2 wholly held by rigid jobs; A runs on n3, worth one node (4
  // GPUs, linear). The band sizes A's nodes: n3 and n4 (4 of 8 GPUs: 0.5)
  // - not 2 nodes of which the rigid jobs' are both, which left A none
  // (it was stopped to save n3).
  Fixture f;
  f.snap.nodes[0].rigid_gpus = 4;
  f.snap.nodes[1].rigid_gpus = 4;
  f.add(running_on(7, on({{2, 4}}), f.snap.nodes));
  f.policy.answer = {on({{2, 4}})};
  const RoundResult r = f.run();
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.autoscale.target, 2);
  EXPECT_EQ(r.autoscale.paid, 2);
  EXPECT_DOUBLE_EQ(r.autoscale.utility, 0.5);
  EXPECT_EQ(r.autoscale.usable, (std::vector<bool>{true, true, true, true}));
  ASSERT_EQ(f.policy.seen_current.size(), 1u);
  EXPECT_EQ(f.policy.seen_current[0], on({{2, 4}}));
  EXPECT_TRUE(r.autoscale.power_down.empty());
}

TEST(AutoscaleRound, RunningJobsKeepTheWholeNodesTheirMinimumsNeed) {
  // n1 and n2 partly held by rigid jobs (1 GPU left on each); A on n3 and
  // B on n4 take at most 1 GPU each. The band asks for 1 node (2 GPUs of
  // 4: 0.5), which n1 and n2 already count as; the running jobs' minimums
  // keep one node besides, the busier (n3: A stays, B moves).
  Fixture f;
  f.snap.nodes[0].rigid_gpus = 3;
  f.snap.nodes[1].rigid_gpus = 3;
  for (std::uint32_t id : {7u, 8u}) {
    ElasticJobSnapshot j = running_on(id, on({{id == 7 ? 2 : 3, 1}}), f.snap.nodes);
    j.range = {1, 1, 1};
    j.state->range = j.range;
    f.add(std::move(j));
  }
  f.policy.answer = {on({{2, 1}}), on({{2, 1}})};
  const RoundResult r = f.run();
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.autoscale.target, 1);
  EXPECT_EQ(r.autoscale.usable, (std::vector<bool>{true, true, true, false}));
}

TEST(AutoscaleRound, TheRoundsUtilityIsOverTheGpusPaidOnceItIsCarriedOut) {
  // As above: one job linear up to 4 GPUs. The nodes powered down do not
  // count: 4 / 8.
  Fixture f;
  f.add(running_on(7, on({{1, 4}}), f.snap.nodes));
  f.policy.answer = {on({{1, 4}})};
  EXPECT_DOUBLE_EQ(f.run().utility, 0.5);
  // The nodes resumed count, the one a job is placed on (Slurm resumes it)
  // and those resumed ahead of need: 8 / 16.
  Fixture g;
  for (std::size_t n = 1; n < 4; ++n) g.snap.nodes[n].power = Power::kOff;
  g.add(running_on(7, on({{0, 4}}), g.snap.nodes));
  g.add(one_node_job(8));
  g.policy.answer = {on({{0, 4}}), on({{1, 4}})};
  const RoundResult r = g.run();
  ASSERT_EQ(r.autoscale.power_up, idx({2, 3}));
  EXPECT_DOUBLE_EQ(r.utility, 0.5);
  // Without auto-scaling: over every node on (4 / 16); none in an arrivals
  // round.
  Fixture h;
  h.params = Params{};
  h.add(running_on(7, on({{1, 4}}), h.snap.nodes));
  h.policy.answer = {on({{1, 4}})};
  EXPECT_DOUBLE_EQ(h.run().utility, 0.25);
  Fixture a;
  a.add(one_node_job(8));
  a.policy.answer = {on({{3, 4}})};
  EXPECT_EQ(a.run(true).utility, -1);
}

TEST(AutoscaleRound, OffByDefaultNothingChanges) {
  Fixture f;
  f.params = Params{};
  f.add(running_on(7, on({{1, 4}}), f.snap.nodes));
  f.policy.answer = {on({{1, 4}})};
  const RoundResult r = f.run();
  EXPECT_FALSE(r.autoscale.active);
  EXPECT_TRUE(r.autoscale.power_down.empty());
  for (const NodeInfo& n : f.policy.seen_nodes) EXPECT_EQ(n.gpus, 4);
  // Nor in an arrivals round.
  Fixture g;
  g.params = Params{};
  g.add(one_node_job(8));
  g.policy.answer = {on({{3, 4}})};
  const RoundResult a = g.run(true);
  EXPECT_FALSE(a.autoscale.active);
  EXPECT_TRUE(a.autoscale.power_down.empty());
  for (const NodeInfo& n : g.policy.seen_nodes) EXPECT_EQ(n.gpus, 4);
}

TEST(AutoscaleRound, AnArrivalsRoundPlacesNewJobsOnlyOnTheNodesWorthRunningAndPowersNothing) {
  // A runs on n2 (linear up to 4 GPUs); B arrives. With every job counted,
  // the band 0.9:1 is worth 2 nodes (1 or 2: 1.0, a tie to the larger):
  // n2 and the first idle node. B may go to n1 only, not to n3 or n4,
  // which the next periodic round would give back; and an arrivals round
  // powers nothing down (n3, n4 idle) or up.
  Fixture f;
  f.params.utility_band = {0.9, 1.0};
  f.add(running_on(7, on({{1, 4}}), f.snap.nodes));
  f.add(one_node_job(8));
  f.policy.answer = {on({{0, 4}})};
  const RoundResult r = f.run(true);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.autoscale.active);
  EXPECT_TRUE(r.autoscale.places_only);
  EXPECT_EQ(r.autoscale.target, 2);
  EXPECT_EQ(r.autoscale.usable, (std::vector<bool>{true, true, false, false}));
  ASSERT_EQ(f.policy.seen_nodes.size(), 4u);
  EXPECT_EQ(f.policy.seen_nodes[0].gpus, 4);
  EXPECT_EQ(f.policy.seen_nodes[1].gpus, 0);  // A's, not resized in an arrivals round
  EXPECT_EQ(f.policy.seen_nodes[2].gpus, 0);
  EXPECT_EQ(f.policy.seen_nodes[3].gpus, 0);
  EXPECT_TRUE(r.autoscale.power_down.empty());
  EXPECT_TRUE(r.autoscale.power_up.empty());
  // On a cluster at rest the first job's nodes are powered down ones: it
  // is placed there (Slurm resumes them), never left waiting.
  Fixture g;
  for (NodeSnapshot& n : g.snap.nodes) n.power = Power::kOff;
  g.add(one_node_job(8));
  g.policy.answer = {on({{0, 4}})};
  const RoundResult a = g.run(true);
  ASSERT_TRUE(a.error.empty()) << a.error;
  EXPECT_GE(a.autoscale.target, 1);
  EXPECT_EQ(g.policy.seen_nodes[0].gpus, 4);
  EXPECT_EQ(a.decisions[0].state.alloc.node_list, "n1");
  EXPECT_TRUE(a.autoscale.power_up.empty());
}

TEST(AutoscaleRound, NodesWithinTheTargetStillPoweredDownAreResumedAheadOfNeed) {
  // A runs on n1, the only node on; B waits. Two jobs linear up to 4 GPUs
  // each: 1 node is worth 1.0, 4 nodes 8/16 = 0.5 (the band's middle). The
  // policy places B on n2 (Slurm resumes it for B); n3 and n4, within the
  // target and idle, are resumed now, ahead of need: a job grows there
  // once they have booted instead of stopping to wait for a boot.
  Fixture f;
  for (std::size_t n = 1; n < 4; ++n) f.snap.nodes[n].power = Power::kOff;
  f.add(running_on(7, on({{0, 4}}), f.snap.nodes));
  f.add(one_node_job(8));
  f.policy.answer = {on({{0, 4}}), on({{1, 4}})};
  const RoundResult r = f.run();
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.autoscale.target, 4);
  EXPECT_EQ(r.autoscale.paid, 1);
  EXPECT_EQ(r.autoscale.power_up, idx({2, 3}));
  EXPECT_TRUE(r.autoscale.power_down.empty());
  // Booting, awaiting registration or unusable (down, drained): not asked again.
  f.snap.nodes[2].power = Power::kBooting;
  f.snap.nodes[3].usable = false;
  f.policy.answer = {on({{0, 4}}), on({{1, 4}})};
  EXPECT_TRUE(f.run().autoscale.power_up.empty());
  f.snap.nodes[2].power = Power::kOff;
  f.snap.nodes[2].awaiting_registration = true;
  f.policy.answer = {on({{0, 4}}), on({{1, 4}})};
  EXPECT_TRUE(f.run().autoscale.power_up.empty());
  // Beyond the target: left powered down (one job worth one node, band 0.9:1).
  Fixture g;
  g.params.utility_band = {0.9, 1.0};
  for (std::size_t n = 1; n < 4; ++n) g.snap.nodes[n].power = Power::kOff;
  g.add(running_on(7, on({{0, 4}}), g.snap.nodes));
  g.policy.answer = {on({{0, 4}})};
  const RoundResult s = g.run();
  EXPECT_EQ(s.autoscale.target, 1);
  EXPECT_TRUE(s.autoscale.power_up.empty());
}

TEST(AutoscaleRound, OnNodesFirstThenBootingThenOff) {
  // Two jobs worth a node each in the band 0.9:1 (1 or 2 nodes: 1.0, 3:
  // 0.67; a tie goes to the larger): 2 nodes. n1 off, n2 booting, n3 and
  // n4 on: the two on.
  Fixture f;
  f.params.utility_band = {0.9, 1.0};
  f.snap.nodes[0].power = Power::kOff;
  f.snap.nodes[1].power = Power::kBooting;
  f.add(one_node_job(7));
  f.add(one_node_job(8));
  f.policy.answer = {on({{2, 4}}), on({{3, 4}})};
  const RoundResult r = f.run();
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.autoscale.target, 2);
  EXPECT_EQ(r.autoscale.paid, 3);
  EXPECT_EQ(r.autoscale.usable, (std::vector<bool>{false, false, true, true}));
  EXPECT_TRUE(r.autoscale.power_down.empty());
  // One job: one node; the other on node is powered down, the booting one left alone.
  f.snap.jobs.pop_back();
  f.inputs.pop_back();
  f.policy.answer = {on({{2, 4}})};
  const RoundResult s = f.run();
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.autoscale.target, 1);
  EXPECT_EQ(s.autoscale.usable, (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(s.autoscale.power_down, idx({3}));
  // Two jobs and only off nodes besides: the booting node before the off one.
  f.add(one_node_job(8));
  f.snap.nodes[3].power = Power::kOff;
  f.policy.answer = {on({{2, 4}}), on({{1, 4}})};
  EXPECT_EQ(f.run().autoscale.usable, (std::vector<bool>{false, true, true, false}));
}

TEST(AutoscaleRound, NodesOfRigidJobsStayAndAreNeverPoweredDown) {
  Fixture f;
  f.snap.nodes[3].rigid_gpus = 1;  // n4 runs a rigid job
  const RoundResult r = f.run();   // no elastic job: no node is worth running
  EXPECT_EQ(r.autoscale.target, 0);
  EXPECT_EQ(r.autoscale.why, "no elastic job to size: 0 nodes worth running of 4 on");
  EXPECT_EQ(f.policy.calls, 0);
  EXPECT_EQ(r.autoscale.usable, (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(r.autoscale.power_down, idx({0, 1, 2}));
  // GPUs kept for the rigid queue hold their node too.
  f.snap.rigid_queue.push_back({1, 4, 0, ""});
  const RoundResult q = f.run();
  EXPECT_EQ(q.autoscale.power_down.size(), 2u);
}

TEST(AutoscaleRound, ANodeSlurmsPowerSavingExcludesStaysOnAndUsable) {
  // SuspendExcNodes / SuspendExcParts (snapshot.cc): an explicit power
  // down would override the administrator's exclusion.
  Fixture f;
  f.snap.nodes[1].power_save_excluded = true;
  const RoundResult r = f.run();  // no elastic job: no node is worth running
  EXPECT_EQ(r.autoscale.target, 0);
  EXPECT_EQ(r.autoscale.usable, (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(r.autoscale.power_down, idx({0, 2, 3}));
}

TEST(AutoscaleRound, ANodeAJobRunsOnIsPoweredDownOnlyOnceTheJobLeftIt) {
  // A on n1 (4 GPUs), B on n2 (2 GPUs, its most): worth one node in the
  // band 0.9:1 (4 GPUs of 4: 1.0; 2 nodes: 6 of 8). The policy may use n1
  // alone; B is placed afresh (its present is not offered), and n2 stays
  // on while B runs there: only n3 and n4 are powered down.
  Fixture f;
  f.params.utility_band = {0.9, 1.0};
  f.add(running_on(7, on({{0, 4}}), f.snap.nodes));
  ElasticJobSnapshot b = running_on(8, on({{1, 2}}), f.snap.nodes);
  b.range = {1, 1, 2};
  b.state->range = b.range;
  f.add(b);
  f.policy.answer = {on({{0, 2}}), on({{0, 2}})};
  const RoundResult r = f.run();
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.autoscale.target, 1);
  EXPECT_EQ(r.autoscale.usable, (std::vector<bool>{true, false, false, false}));
  ASSERT_EQ(f.policy.seen_current.size(), 2u);
  EXPECT_EQ(f.policy.seen_current[0], on({{0, 4}}));
  EXPECT_TRUE(f.policy.seen_current[1].empty()) << "a job on a node left out is placed afresh";
  EXPECT_EQ(r.decisions[1].action, Action::kSignal);
  EXPECT_EQ(r.autoscale.power_down, idx({2, 3}));
  // Once B runs on n1, n2 is idle and powered down.
  f.snap.jobs[1] = running_on(8, on({{0, 2}}), f.snap.nodes);
  f.snap.jobs[1].range = b.range;
  f.snap.jobs[1].state->range = b.range;
  f.snap.jobs[0] = running_on(7, on({{0, 2}}), f.snap.nodes);
  f.policy.answer = {on({{0, 2}}), on({{0, 2}})};
  EXPECT_EQ(f.run().autoscale.power_down, idx({1, 2, 3}));
}

}  // namespace
}  // namespace pollux::sched

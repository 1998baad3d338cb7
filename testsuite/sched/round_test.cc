// The scheduling round without Slurm: what the policy is told, and what
// each decision turns into (hold, release at a size, checkpoint signal,
// requeue), through every phase of an elastic job's life.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <tuple>

#include "pollux/resize_decision.h"
#include "sched/resize_request.h"
#include "sched/round.h"
#include "sched_test_util.h"

namespace pollux::sched {
namespace {

using test::four_nodes;
using test::on;
using test::ScriptedPolicy;

constexpr double kNow = 1700001000;

ElasticJobSnapshot pending_job(std::uint32_t id, ElasticRange range = {1, 4, 4}) {
  ElasticJobSnapshot j;
  j.job_id = id;
  j.uid = 1000;
  j.submit_time = kNow - 100;
  j.range = range;
  j.held_by_pollux = true;  // held at submission
  return j;
}

JobState state(Phase phase, Alloc alloc, double since, std::string why = "start") {
  JobState s;
  s.range = {1, 4, 4};
  s.phase = phase;
  s.alloc = std::move(alloc);
  s.since = since;
  s.why = std::move(why);
  return s;
}

ElasticJobSnapshot running_job(std::uint32_t id, const Placement& p, const std::vector<NodeSnapshot>& nodes) {
  ElasticJobSnapshot j = pending_job(id);
  j.held_by_pollux = false;
  j.running = true;
  j.start_time = kNow - 50;
  j.current = p;
  j.decided = p;
  j.state = state(Phase::kRunning, to_alloc(p, nodes), kNow - 50);
  return j;
}

// Released at `p` five seconds ago; Slurm has not started it yet.
ElasticJobSnapshot starting_job(std::uint32_t id, const Placement& p, const std::vector<NodeSnapshot>& nodes) {
  ElasticJobSnapshot j = pending_job(id);
  j.held_by_pollux = false;
  j.state = state(Phase::kStarting, to_alloc(p, nodes), kNow - 5);
  j.decided = p;
  return j;
}

struct Fixture : test::RoundFixture {
  Fixture() : RoundFixture(kNow) {}
  // Jobs profiled on 8 GPUs (so they may get all 16) unless a test says otherwise.
  void add(ElasticJobSnapshot j, int profiled = 8) { RoundFixture::add(std::move(j), profiled); }
};

TEST(Round, ANewJobIsReleasedAtThePolicysSize) {
  Fixture f;
  f.add(pending_job(7));
  f.policy.answer = {on({{0, 2}, {1, 2}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.decisions.size(), 1u);
  const JobDecision& d = r.decisions[0];
  EXPECT_EQ(d.action, Action::kRelease);
  EXPECT_EQ(d.state.phase, Phase::kStarting);
  EXPECT_EQ(d.state.alloc, (Alloc{2, 2, "n1,n2"}));
  EXPECT_EQ(d.state.why, "start");
  EXPECT_EQ(d.state.since, kNow);
  EXPECT_EQ(d.state.submit, kNow - 100);
  EXPECT_EQ(d.view.gpus, 4);
  EXPECT_EQ(d.comment, format_comment(d.view, d.state));
  // The policy saw the job with its limits and linear speedup, no current allocation.
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  EXPECT_EQ(f.policy.seen_jobs[0].id, 7u);
  EXPECT_EQ(f.policy.seen_jobs[0].min_replicas, 1);
  EXPECT_EQ(f.policy.seen_jobs[0].max_replicas, 16);
  EXPECT_EQ(f.policy.seen_jobs[0].age, 100);
  EXPECT_EQ(f.policy.seen_jobs[0].speedup(2, 8), 8);
  EXPECT_EQ(f.policy.seen_jobs[0].speedup(5, 5), 0);
  EXPECT_TRUE(f.policy.seen_current[0].empty());
}

TEST(Round, AJobMayAtMostDoubleTheScaleItWasProfiledAt) {
  for (auto [profiled, max] : {std::pair{0, 1}, std::pair{1, 2}, std::pair{3, 6}, std::pair{8, 16}, std::pair{20, 16}}) {
    Fixture f;
    f.add(pending_job(7), profiled);
    f.policy.answer = {{}};
    f.run();
    EXPECT_EQ(f.policy.seen_jobs[0].max_replicas, max) << profiled;
  }
  {  // a running job never has to shrink for want of a (valid) hint
    Fixture f;
    f.add(running_job(8, on({{0, 4}, {1, 4}}), f.snap.nodes), 0);
    f.policy.answer = {on({{0, 4}, {1, 4}})};
    f.run();
    EXPECT_EQ(f.policy.seen_jobs[0].max_replicas, 8);
  }
  Fixture f;  // never below the job's minimum
  f.add(pending_job(7, ElasticRange{3, 4, 4}), 0);
  f.policy.answer = {{}};
  f.run();
  EXPECT_EQ(f.policy.seen_jobs[0].min_replicas, 3);
  EXPECT_EQ(f.policy.seen_jobs[0].max_replicas, 3);
}

TEST(Round, ANewJobWithoutGpusGetsPolluxsHoldOnce) {
  Fixture f;
  f.add(pending_job(7));
  f.policy.answer = {{}};
  RoundResult r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kHold);  // the submission hold becomes sched/pollux's
  EXPECT_EQ(r.decisions[0].state.phase, Phase::kHeld);
  EXPECT_EQ(r.decisions[0].state.why, "wait");
  f.snap.jobs[0].state = r.decisions[0].state;
  r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kNone);
}

TEST(Round, WithoutAPolicyNothingChangesSize) {
  Fixture f;
  f.add(pending_job(7));
  f.add(running_job(8, on({{2, 4}}), f.snap.nodes));
  const RoundResult r = f.run(false);
  EXPECT_FALSE(r.policy_ran);
  EXPECT_EQ(r.decisions[0].action, Action::kHold);
  EXPECT_EQ(r.decisions[1].action, Action::kNone);
  EXPECT_EQ(r.decisions[1].state.phase, Phase::kRunning);
}

TEST(Round, ARunningJobKeptAtItsSizeIsLeftAlone) {
  Fixture f;
  f.add(running_job(8, on({{2, 4}}), f.snap.nodes));
  f.policy.answer = {on({{2, 4}})};
  const RoundResult r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kNone);
  EXPECT_EQ(r.decisions[0].state.phase, Phase::kRunning);
  EXPECT_EQ(f.policy.seen_current[0], on({{2, 4}}));
  EXPECT_EQ(f.policy.seen_jobs[0].restarts, 0);
}

// JobInput::immediate_checkpoint (pollux-sim's agents): a resize is the
// requeue at the new size in the round that decides it; without it (every
// real agent) the job is signalled and checkpoints first.
TEST(Round, AnAgentThatCheckpointsAtOnceIsRequeuedInTheRoundThatResizesIt) {
  for (const bool at_once : {false, true}) {
    for (const Placement& to : {on({{2, 4}, {3, 4}}), Placement{}}) {
      Fixture f;
      f.add(running_job(8, on({{2, 4}}), f.snap.nodes));
      f.inputs[0].immediate_checkpoint = at_once;
      f.policy.answer = {to};
      const RoundResult r = f.run();
      ASSERT_TRUE(r.error.empty()) << r.error;
      const JobDecision& d = r.decisions[0];
      EXPECT_EQ(d.action, at_once ? Action::kRequeue : Action::kSignal);
      EXPECT_EQ(d.state.why, to.empty() ? "preempt" : "grow");
      if (at_once) {
        EXPECT_EQ(d.state.phase, to.empty() ? Phase::kHeld : Phase::kStarting);
        EXPECT_EQ(d.state.alloc, to_alloc(to, f.snap.nodes));
        EXPECT_TRUE(d.state.from.empty());
      } else {
        EXPECT_EQ(d.state.phase, Phase::kCheckpointing);
        EXPECT_EQ(d.signal, SIGUSR1);
      }
    }
  }
}

// Reversing a decision seconds after it was made costs a restart: the
// policy's restart factor is taken over the job's current run too, and the
// smaller one counts (max(r - D, 0) / (r + D) for a run r seconds old).
TEST(Round, ARecentRestartWeighsOnTheNextResize) {
  // (run, restarts before; what the policy sees): a job of 3 restarts in
  // 100 s already pays more over its life (10/130) than over a 90 s run;
  // a run that began without a restart has Pollux's factor alone.
  for (auto [run, before, age, restarts] : {std::tuple{10.0, 1, 10.0, 1}, std::tuple{50.0, 1, 50.0, 1},
                                            std::tuple{90.0, 3, 100.0, 3}, std::tuple{10.0, 0, 100.0, 0}}) {
    Fixture f;  // submitted 100 s ago, restart_penalty 30 s
    ElasticJobSnapshot j = running_job(8, on({{2, 4}}), f.snap.nodes);
    j.start_time = kNow - run;
    j.restarts = before;
    f.add(j);
    f.policy.answer = {on({{2, 4}})};
    f.run();
    EXPECT_EQ(f.policy.seen_jobs[0].age, age) << run;
    EXPECT_EQ(f.policy.seen_jobs[0].restarts, restarts) << run;
  }
}

// A running job whose agent has not announced a resize signal in its
// current run (a program without the agent, or one still starting) is
// moldable: it keeps its size, is never signalled, and its GPUs are not
// the policy's to give; its comment says kind=moldable.
TEST(Round, AMoldableJobIsNeverSignalled) {
  for (int announced : {0, SIGUSR1}) {
    Fixture f;
    f.add(running_job(8, on({{0, 4}, {1, 4}}), f.snap.nodes));
    f.inputs[0].resize_signal = announced;
    f.inputs[0].hint_restarts = announced ? 1 : -1;  // an earlier run's announcement
    f.add(pending_job(9));
    f.policy.answer = {on({{0, 4}, {1, 4}, {2, 4}, {3, 4}})};  // all 16 GPUs for job 9
    const RoundResult r = f.run();
    ASSERT_EQ(r.decisions.size(), 2u);
    const JobDecision& d = r.decisions[0].job == 0 ? r.decisions[0] : r.decisions[1];
    EXPECT_EQ(d.action, Action::kNone);
    EXPECT_EQ(d.state.phase, Phase::kRunning);
    EXPECT_EQ(d.view.kind, announced ? "elastic" : "moldable");
    EXPECT_NE(d.comment.find(announced ? " kind=elastic" : " kind=moldable"), std::string::npos) << d.comment;
    ASSERT_EQ(f.policy.seen_jobs.size(), 1u) << "the moldable job was given to the policy";
    EXPECT_EQ(f.policy.seen_jobs[0].id, 9u);
  }
}

// The signal a resize sends is the one the agent announced, if the
// administrator allows it (pollux_resize_signals); else the job is moldable.
TEST(Round, AResizeSendsTheAnnouncedSignalIfAllowed) {
  for (auto [sig, allowed] : {std::pair{SIGUSR2, true}, std::pair{SIGURG, false}}) {
    Fixture f;
    f.add(running_job(8, on({{0, 4}, {1, 4}}), f.snap.nodes));
    f.inputs[0].resize_signal = sig;
    f.policy.answer = {on({{0, 4}})};
    const JobDecision d = f.run().decisions[0];
    EXPECT_EQ(d.action, allowed ? Action::kSignal : Action::kNone) << sig;
    EXPECT_EQ(d.signal, allowed ? sig : 0) << sig;
    f.params.resize_signals |= 1ULL << (SIGURG - 1);  // pollux_resize_signals=USR1:USR2:URG
    EXPECT_EQ(f.run().decisions[0].signal, sig);
  }
}

TEST(Round, AResizeStartsWithACheckpointSignal) {
  struct Case {
    Placement to;
    const char* why;
  };
  for (const Case& c : {Case{on({{0, 4}, {1, 4}}), "grow"}, Case{on({{2, 2}}), "shrink"}, Case{on({{3, 4}}), "move"},
                        Case{{}, "preempt"}}) {
    Fixture f;
    f.add(running_job(8, on({{2, 4}}), f.snap.nodes));
    f.policy.answer = {c.to};
    const RoundResult r = f.run();
    const JobDecision& d = r.decisions[0];
    EXPECT_EQ(d.action, Action::kSignal) << c.why;
    EXPECT_EQ(d.state.phase, Phase::kCheckpointing) << c.why;
    EXPECT_EQ(d.state.why, c.why);
    EXPECT_EQ(d.state.since, kNow);
    EXPECT_EQ(d.state.alloc, to_alloc(c.to, f.snap.nodes));
    EXPECT_EQ(d.state.from, (Alloc{1, 4, "n3"})) << c.why << ": where it runs meanwhile";
  }
}

struct Checkpointing : ::testing::Test {
  Fixture f;
  void SetUp() override {
    ElasticJobSnapshot j = running_job(8, on({{2, 4}}), f.snap.nodes);
    j.state = state(Phase::kCheckpointing, Alloc{2, 4, "n3,n4"}, kNow - 10, "grow");
    j.decided = on({{2, 4}, {3, 4}});
    f.add(j);
    f.policy.answer = {on({{2, 4}, {3, 4}})};
  }
};

TEST_F(Checkpointing, WaitsForTheAgent) {
  const RoundResult r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kNone);
  EXPECT_EQ(r.decisions[0].state.phase, Phase::kCheckpointing);
  EXPECT_EQ(r.decisions[0].state.since, kNow - 10);
  // Where it runs is kept (filled in for a comment an older version wrote).
  EXPECT_EQ(r.decisions[0].state.from, (Alloc{1, 4, "n3"}));
  // The policy was told the job holds what it was promised.
  EXPECT_EQ(f.policy.seen_current[0], on({{2, 4}, {3, 4}}));
}

TEST_F(Checkpointing, ARequeueAddsTheRunToTheTimeUsed) {
  f.snap.jobs[0].state->limit = 60;  // minutes over the job's whole life
  f.snap.jobs[0].state->used = 600;
  f.inputs[0].checkpoint_ack = kNow - 5;
  const JobDecision d = f.run().decisions[0];
  EXPECT_EQ(d.action, Action::kRequeue);
  EXPECT_EQ(d.state.limit, 60);
  EXPECT_EQ(d.state.used, 650);  // this run started 50 s ago
  EXPECT_EQ(next_run_limit(d.state), 50);  // ceil((3600 - 650) / 60)
}

TEST_F(Checkpointing, AnOldAcknowledgementDoesNotCount) {
  f.inputs[0].checkpoint_ack = kNow - 11;
  EXPECT_EQ(f.run().decisions[0].action, Action::kNone);
}

TEST_F(Checkpointing, TheAgentsAcknowledgementRequeuesAtTheNewSize) {
  f.inputs[0].checkpoint_ack = kNow - 5;
  const RoundResult r = f.run();
  const JobDecision& d = r.decisions[0];
  EXPECT_EQ(d.action, Action::kRequeue);
  EXPECT_EQ(d.state.phase, Phase::kStarting);
  EXPECT_EQ(d.state.alloc, (Alloc{2, 4, "n3,n4"}));
  EXPECT_EQ(d.state.since, kNow);
  EXPECT_EQ(d.state.why, "grow");
  // Its start as squeue --start shows it, not the parking an hour ahead.
  EXPECT_EQ(d.view.start, kNow + kRequeueGap);
  EXPECT_NE(d.comment.find(" start=" + slurm_time(kNow + kRequeueGap) + " "), std::string::npos) << d.comment;
}

// Parked until Slurm finishes the requeue: it starts a gap after that, as
// far as sched/pollux can tell; once unparked (or preempted, no GPUs), no
// estimate of its own.
TEST(Round, ARequeuedJobsStartIsEstimatedWhileItIsParked) {
  ElasticJobSnapshot j;
  j.restarts = 1;
  JobState s = state(Phase::kStarting, Alloc{1, 4, "n1"}, kNow - 1, "shrink");
  j.begin_time = kNow - 1 + kRequeueParking;
  EXPECT_EQ(requeue_start(j, s, Action::kNone, kNow), kNow + kRequeueGap);
  j.begin_time = kNow;
  EXPECT_FALSE(requeue_start(j, s, Action::kNone, kNow));
  j.begin_time = kNow - 1 + kRequeueParking;
  s.alloc = {};
  EXPECT_FALSE(requeue_start(j, s, Action::kNone, kNow));
}

TEST_F(Checkpointing, TheTimeoutRequeuesWithoutTheAgent) {
  f.params.checkpoint_timeout = 10;
  const JobDecision d = f.run().decisions[0];
  EXPECT_EQ(d.action, Action::kRequeue);
  // Said in the log and counted as a time-out (pollux-status), not as an acknowledgement.
  EXPECT_TRUE(d.checkpoint_timed_out);
  EXPECT_EQ(d.note,
            "no acknowledgement of the checkpoint signal within pollux_checkpoint_timeout=10 s: requeued at its new "
            "size all the same; it restarts from its last checkpoint");
  f.params.checkpoint_timeout = 11;
  EXPECT_EQ(f.run().decisions[0].action, Action::kNone);
  f.params.checkpoint_timeout = 10;
  f.inputs[0].checkpoint_ack = kNow - 5;
  const JobDecision acked = f.run().decisions[0];
  EXPECT_EQ(acked.action, Action::kRequeue);
  EXPECT_FALSE(acked.checkpoint_timed_out);
  EXPECT_EQ(acked.note, "");
}

TEST_F(Checkpointing, ALightRoundMovesItOnToo) {
  f.inputs[0].checkpoint_ack = kNow - 1;
  const RoundResult r = f.run(false);
  EXPECT_EQ(r.decisions[0].action, Action::kRequeue);
  EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{2, 4, "n3,n4"}));
}

TEST_F(Checkpointing, ThePolicyChangingItsMindCancelsTheMove) {
  f.policy.answer = {on({{2, 4}})};
  const RoundResult r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kNone);
  EXPECT_EQ(r.decisions[0].state.phase, Phase::kRunning);
  EXPECT_EQ(r.decisions[0].state.why, "cancel");
}

// Its agent may have checkpointed and be waiting for the requeue: the
// cancel goes into the spool, which it reads (not signalled), and it trains
// on at once instead of after its requeue wait. A resize signalled, not
// called off, gets its request.
TEST_F(Checkpointing, ACancelledMoveIsWrittenForTheAgent) {
  char tmpl[] = "/tmp/pollux-cancel-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string spool = tmpl;
  f.snap.jobs[0].restarts = 3;
  f.policy.answer = {on({{2, 4}})};
  RoundResult r = f.run();
  ASSERT_EQ(r.decisions[0].state.why, "cancel");
  write_resize_requests(f.snap, r, spool, 1795680333999);
  const std::string path = resize_decision_path(spool, f.snap.jobs[0].job_id);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "cancel 3 1795680333999\n");
  EXPECT_TRUE(r.decisions[0].note.empty()) << r.decisions[0].note;
  // A spool it cannot be written into: noted, the decision stands.
  std::remove(path.c_str());
  ::rmdir(tmpl);
  r = f.run();
  write_resize_requests(f.snap, r, spool, 1795680334999);
  EXPECT_EQ(r.decisions[0].state.why, "cancel");
  EXPECT_NE(r.decisions[0].note.find("its agent not told"), std::string::npos) << r.decisions[0].note;
}

TEST_F(Checkpointing, ARequeueToNoGpusHoldsTheJob) {
  f.policy.answer = {{}};
  f.inputs[0].checkpoint_ack = kNow;
  const RoundResult r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kRequeue);
  EXPECT_EQ(r.decisions[0].state.phase, Phase::kHeld);
  EXPECT_TRUE(r.decisions[0].state.alloc.empty());
  EXPECT_EQ(r.decisions[0].state.why, "preempt");
}

TEST(Round, AStartingJobIsReleasedAgainOnlyWhenItsSizeChanges) {
  Fixture f;
  f.add(starting_job(7, on({{1, 4}}), f.snap.nodes));
  f.policy.answer = {on({{1, 4}})};
  EXPECT_EQ(f.run().decisions[0].action, Action::kNone);
  EXPECT_EQ(f.policy.seen_current[0], on({{1, 4}}));
  f.policy.answer = {on({{0, 2}})};
  const RoundResult r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kRelease);
  EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{1, 2, "n1"}));
  f.policy.answer = {{}};
  EXPECT_EQ(f.run().decisions[0].action, Action::kHold);
}

TEST(Round, JobsHeldByOthersAreNeitherScheduledNorTouched) {
  Fixture f;
  ElasticJobSnapshot j = pending_job(7);
  j.held_by_pollux = false;
  j.held_by_other = true;
  f.add(j);
  f.add(pending_job(8));
  f.policy.answer = {on({{0, 4}})};
  const RoundResult r = f.run();
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].job, 1u);
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  EXPECT_EQ(f.policy.seen_jobs[0].id, 8u);
  // The held job is not touched in Slurm; its comment says it has no GPUs.
  EXPECT_EQ(r.decisions[1].job, 0u);
  EXPECT_EQ(r.decisions[1].action, Action::kNone);
  EXPECT_EQ(r.decisions[1].state.phase, Phase::kHeld);
  EXPECT_TRUE(r.decisions[1].state.alloc.empty());
  EXPECT_EQ(r.decisions[1].state.why, "held");
}

TEST(Round, AJobHeldByItsUserAfterARequeueGivesBackWhatItWasPromised) {
  Fixture f;
  // Released at 2x4 (its requeue for a resize); the user held it meanwhile.
  ElasticJobSnapshot j = starting_job(7, on({{0, 4}, {1, 4}}), f.snap.nodes);
  j.held_by_other = true;
  j.restarts = 1;
  f.add(j);
  f.add(pending_job(8));
  f.policy.answer = {on({{0, 4}, {1, 4}, {2, 4}, {3, 4}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  EXPECT_TRUE(f.policy.seen_current[0].empty());
  for (const NodeInfo& n : f.policy.seen_nodes) EXPECT_EQ(n.gpus, 4);  // nothing kept for job 7
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].action, Action::kRelease);
  EXPECT_EQ(r.decisions[1].action, Action::kNone);
  EXPECT_EQ(r.decisions[1].state.phase, Phase::kHeld);
  EXPECT_TRUE(r.decisions[1].state.alloc.empty());
}

TEST(Round, AJobHeldWhileItRunsKeepsItsSizeAndItsCheckpointIsCalledOff) {
  Fixture f;
  ElasticJobSnapshot j = running_job(7, on({{0, 4}}), f.snap.nodes);
  j.held_by_other = true;
  j.state = state(Phase::kCheckpointing, Alloc{2, 4, "n1,n2"}, kNow - 5, "grow");
  f.add(j);
  f.add(pending_job(8));
  f.policy.answer = {on({{1, 4}, {2, 4}, {3, 4}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  EXPECT_EQ(f.policy.seen_nodes[0].gpus, 0);  // its GPUs are its own
  ASSERT_EQ(r.decisions.size(), 2u);
  const JobDecision& d = r.decisions[1];
  EXPECT_EQ(d.job, 0u);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_EQ(d.state.phase, Phase::kRunning);
  EXPECT_EQ(d.state.alloc, (Alloc{1, 4, "n1"}));
  EXPECT_EQ(d.state.why, "cancel");
}

TEST(Round, BlockedJobsAreHeldWithTheirReasonAndGetNoGpus) {
  for (const char* why : {"dependency", "dependency-never", "reservation", "partition", "refused"}) {
    Fixture f;
    ElasticJobSnapshot j = starting_job(7, on({{0, 4}}), f.snap.nodes);
    j.blocker = why;
    f.add(j);
    f.policy.answer = {};
    const RoundResult r = f.run();
    EXPECT_TRUE(f.policy.seen_jobs.empty());
    ASSERT_EQ(r.decisions.size(), 1u);
    EXPECT_EQ(r.decisions[0].action, Action::kHold) << why;
    EXPECT_EQ(r.decisions[0].state.why, why);
    EXPECT_EQ(r.decisions[0].hold_reason, hold_reason_for(why));
    EXPECT_TRUE(r.decisions[0].state.alloc.empty());
    // Held with that reason already: nothing to do.
    f.snap.jobs[0].held_by_pollux = true;
    f.snap.jobs[0].hold_text = hold_reason_for(why);
    EXPECT_EQ(f.run().decisions[0].action, Action::kNone);
    // Unblocked and without GPUs: the reason goes back to waiting for GPUs.
    f.snap.jobs[0].blocker.clear();
    f.policy.answer = {{}};
    const RoundResult r2 = f.run();
    EXPECT_EQ(r2.decisions[0].action, Action::kHold);
    EXPECT_EQ(r2.decisions[0].hold_reason, "pollux: waiting for GPUs");
  }
}

TEST(Round, ThePolicyIsToldWhereAndHowLargeSlurmLetsAJobRun) {
  Fixture f;
  ElasticJobSnapshot j = pending_job(7);
  j.allowed = {false, false, true, true};  // a partition of n3, n4
  j.max_nodes_limit = 2;                   // its MaxNodes
  f.add(j);
  ElasticJobSnapshot k = pending_job(8);
  k.max_nodes_limit = 8;  // above its own range: no limit to pass on
  f.add(k);
  f.policy.answer = {on({{2, 4}}), on({{0, 4}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 2u);
  EXPECT_EQ(f.policy.seen_jobs[0].allowed_nodes, (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(f.policy.seen_jobs[0].max_nodes, 2);
  EXPECT_TRUE(f.policy.seen_jobs[1].allowed_nodes.empty());
  EXPECT_EQ(f.policy.seen_jobs[1].max_nodes, 0);
  // An answer outside them is not used.
  f.policy.answer = {on({{0, 4}}), {}};
  EXPECT_NE(f.run().error.find("may not use"), std::string::npos);
}

TEST(Round, ThePolicyKeepsToAJobsQosAndAssociationLimits) {
  Fixture f;
  ElasticJobSnapshot j = pending_job(7);  // 1-4 x 4: up to 16 GPUs
  j.max_gpus_limit = 2;                   // e.g. MaxTRESPerJob=gres/gpu=2
  f.add(j);
  ElasticJobSnapshot k = pending_job(8, {2, 4, 1});
  k.max_gpus_limit = 1;  // below its minimum: the round never asks for less than it can use
  f.add(k);
  f.policy.answer = {on({{0, 2}}), {}};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 2u);
  EXPECT_EQ(f.policy.seen_jobs[0].max_replicas, 2);
  EXPECT_EQ(f.policy.seen_jobs[1].max_replicas, 2);  // its min_replicas (the snapshot blocks such a job)
  // An answer above the limit is not used.
  f.policy.answer = {on({{0, 4}}), {}};
  EXPECT_FALSE(f.run().error.empty());
}

TEST(Round, AllowedRangeIsTheRangeWithinSlurmsBoundsLessRefusedSizes) {
  ElasticJobSnapshot j = pending_job(7, {1, 4, 4});
  EXPECT_EQ(*allowed_range(j), (ElasticRange{1, 4, 4}));
  j.min_nodes_limit = 2;          // partition MinNodes
  j.max_nodes_limit = 3;          // MaxNodes
  j.max_gpus_per_node_limit = 2;  // MaxCPUsPerNode / CPUs per task
  EXPECT_EQ(*allowed_range(j), (ElasticRange{2, 3, 2}));
  // Limits beyond the range change nothing.
  j = pending_job(7, {2, 3, 2});
  j.min_nodes_limit = 1, j.max_nodes_limit = 8, j.max_gpus_per_node_limit = 4;
  EXPECT_EQ(*allowed_range(j), (ElasticRange{2, 3, 2}));
  // A refused size takes every size at least as large in both dimensions,
  // along the dimension that loses fewer: 3x1 of 1-4x4 -> 1-2x4 (8 sizes
  // kept, not 4 of 1-4x... nothing at 1 GPU less).
  j = pending_job(7, {1, 4, 4});
  j.refused = {{3, 1}};
  EXPECT_EQ(*allowed_range(j), (ElasticRange{1, 2, 4}));
  j.refused = {{1, 3}};  // 1-4x2 (8 sizes) rather than nothing below 1 node
  EXPECT_EQ(*allowed_range(j), (ElasticRange{1, 4, 2}));
  j.refused = {{1, 3}, {4, 2}, {5, 1}};  // the last is already out
  EXPECT_EQ(*allowed_range(j), (ElasticRange{1, 3, 2}));
  j.refused = {{1, 1}};  // the smallest size: none left
  EXPECT_FALSE(allowed_range(j));
  j = pending_job(7, {2, 4, 4});
  j.min_nodes_limit = 5;  // MinNodes above the range
  EXPECT_FALSE(allowed_range(j));
  j = pending_job(7);
  j.no_size = "PartitionTimeLimit";
  EXPECT_FALSE(allowed_range(j));
}

TEST(Round, ThePolicyNeverProposesASizeSlurmRefuses) {
  Fixture f;
  ElasticJobSnapshot j = pending_job(7);
  j.min_nodes_limit = 2;
  j.max_gpus_per_node_limit = 2;
  j.refused = {{4, 1}};  // then at most 3 nodes
  f.add(j);
  f.policy.answer = {on({{0, 2}, {1, 2}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  const JobInfo& seen = f.policy.seen_jobs[0];
  EXPECT_EQ(seen.min_replicas, 2);
  EXPECT_EQ(seen.max_replicas, 6);
  EXPECT_EQ(seen.max_nodes, 3);
  EXPECT_EQ(seen.min_nodes, 2);
  EXPECT_EQ(seen.speedup(1, 2), 0.0);  // below MinNodes
  EXPECT_EQ(seen.speedup(2, 6), 0.0);  // 3 GPUs per node
  EXPECT_GT(seen.speedup(2, 4), 0.0);
  EXPECT_EQ(r.decisions[0].action, Action::kRelease);
  // An answer outside the bounds is not used.
  for (const Placement& bad : {on({{0, 4}}), on({{0, 3}, {1, 3}}), on({{0, 1}, {1, 1}, {2, 1}, {3, 1}})}) {
    f.policy.answer = {bad};
    EXPECT_FALSE(f.run().error.empty());
  }
}

TEST(Round, AJobSlurmAllowsNoSizeGetsNoGpusAndSaysWhy) {
  Fixture f;
  ElasticJobSnapshot j = pending_job(7);
  j.no_size = "PartitionTimeLimit";
  f.add(j);
  f.add(running_job(8, on({{0, 4}, {1, 4}}), f.snap.nodes));
  f.snap.jobs[1].no_size = "PartitionTimeLimit";  // lowered under it: it keeps running at its size
  f.policy.answer = {};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(f.policy.seen_jobs.empty());
  ASSERT_EQ(r.decisions.size(), 2u);
  for (const JobDecision& d : r.decisions) {
    if (d.job == 0) {
      EXPECT_EQ(d.action, Action::kHold);
      EXPECT_EQ(d.state.why, "limits");
      EXPECT_TRUE(d.state.alloc.empty());
      EXPECT_EQ(d.hold_reason, "pollux: no size Slurm allows (PartitionTimeLimit)");
    } else {
      EXPECT_EQ(d.action, Action::kNone);
      EXPECT_EQ(d.state.phase, Phase::kRunning);
      EXPECT_EQ(d.state.alloc.nodes, 2);
    }
  }
  // Refused sizes that leave none: held, Slurm's reason being a refusal.
  f.snap.jobs[0].no_size.clear();
  f.snap.jobs[0].refused = {{1, 1}};
  const RoundResult r2 = f.run();
  EXPECT_EQ(r2.decisions[0].hold_reason, "pollux: no size Slurm allows (refused)");
}

TEST(Round, APromiseSlurmNoLongerAllowsIsDecidedAgainInAnArrivalsRound) {
  Fixture f;
  ElasticJobSnapshot j = starting_job(7, on({{0, 4}, {1, 4}}), f.snap.nodes);
  j.refused = {{2, 4}};  // -> 1-4x3
  f.add(j);
  f.policy.answer = {on({{0, 3}})};
  const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  EXPECT_EQ(r.decisions[0].action, Action::kRelease);
  EXPECT_EQ(r.decisions[0].state.alloc.nodes, 1);
}

TEST(Round, AnArrivalsRoundSizesOnlyJobsWithoutGpusInWhatTheOthersLeave) {
  Fixture f;
  f.add(running_job(7, on({{0, 4}, {1, 4}}), f.snap.nodes));
  f.add(starting_job(8, on({{2, 2}}), f.snap.nodes));
  ElasticJobSnapshot fresh = pending_job(9);
  fresh.submit_time = kNow - 1;  // submitted a second ago
  f.add(fresh);
  f.policy.answer = {on({{2, 2}, {3, 2}})};
  const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  EXPECT_EQ(f.policy.seen_jobs[0].id, 9u);
  EXPECT_EQ(f.policy.seen_jobs[0].age, f.params.restart_penalty);  // not 1: Pollux's restart factor is not ~0
  EXPECT_EQ(f.policy.seen_nodes[0].gpus, 0);
  EXPECT_EQ(f.policy.seen_nodes[1].gpus, 0);
  EXPECT_EQ(f.policy.seen_nodes[2].gpus, 2);
  EXPECT_EQ(f.policy.seen_nodes[3].gpus, 4);
  ASSERT_EQ(r.decisions.size(), 3u);
  EXPECT_EQ(r.decisions[0].action, Action::kNone);  // the running job is not resized
  EXPECT_EQ(r.decisions[1].action, Action::kNone);  // nor the promise changed
  EXPECT_EQ(r.decisions[2].action, Action::kRelease);
  EXPECT_EQ(r.decisions[2].state.alloc, (Alloc{2, 2, "n3,n4"}));
  // Nothing free: the policy is not asked.
  f.snap.nodes[3].rigid_gpus = 4;
  f.snap.nodes[2].rigid_gpus = 2;
  f.policy.seen_jobs.clear();
  const RoundResult none = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  EXPECT_FALSE(none.policy_ran);
  EXPECT_EQ(none.decisions[2].state.phase, Phase::kHeld);
}

// Interference avoidance holds across the round: an arrivals round's policy
// sees only the GPUs the others leave, not that a distributed job runs on
// them, and placed a second distributed job beside it (pollux-demo --cloud:
// job 3 released on 2x1@n1,n2 where job 5 ran 2x1@n1,n2). Such a placement
// waits for the next periodic round; one on a single node is taken.
TEST(Round, AnArrivalsRoundPlacesNoDistributedJobBesideAnother) {
  Fixture f;
  f.add(running_job(7, on({{0, 2}, {1, 2}}), f.snap.nodes));
  ElasticJobSnapshot fresh = pending_job(9);
  fresh.submit_time = kNow - 1;
  f.add(fresh);
  f.policy.answer = {on({{1, 2}, {2, 2}})};
  const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  EXPECT_TRUE(r.policy_ran);
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[1].state.phase, Phase::kHeld) << r.decisions[1].comment;
  EXPECT_NE(r.decisions[1].action, Action::kRelease);
  // Off the distributed job's nodes, or on one node beside it: released.
  for (const Placement& ok : {on({{2, 2}, {3, 2}}), on({{1, 2}})}) {
    f.policy.answer = {ok};
    const RoundResult next = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
    EXPECT_EQ(next.decisions[1].action, Action::kRelease) << next.decisions[1].comment;
  }
  // Without interference avoidance the policy's answer stands.
  PolicyOptions o;
  o.interference_avoidance = false;
  ScriptedPolicy loose(o);
  loose.answer = {on({{1, 2}, {2, 2}})};
  EXPECT_EQ(plan_round(f.snap, f.inputs, f.params, &loose, true).decisions[1].action, Action::kRelease);
}

TEST(Round, AJobsFirstTimeLimitCountsItsWholeLife) {
  Fixture f;
  ElasticJobSnapshot j = pending_job(7);
  j.time_limit = 10;
  f.add(j);
  f.policy.answer = {on({{0, 1}})};
  const JobDecision d = f.run().decisions[0];
  EXPECT_EQ(d.state.limit, 10);
  EXPECT_EQ(d.state.used, 0);
  EXPECT_EQ(next_run_limit(d.state), 10);
  JobState s;
  EXPECT_EQ(next_run_limit(s), 0);  // no limit
  s.limit = 1;
  s.used = 600;
  EXPECT_EQ(next_run_limit(s), 1);  // at least a minute
}

TEST(Round, AJobNearItsTimeLimitIsNotResized) {
  Fixture f;
  ElasticJobSnapshot j = running_job(7, on({{0, 1}}), f.snap.nodes);
  j.state->limit = 2;  // 120 s, 50 of them used by this run
  f.add(j);
  f.add(pending_job(8));
  f.policy.answer = {on({{0, 4}}), on({{1, 4}})};
  EXPECT_EQ(f.run().decisions[0].action, Action::kSignal);  // 70 s left: may grow
  f.snap.jobs[0].state->used = 30;  // 40 s left
  f.policy.answer = {on({{1, 4}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  EXPECT_EQ(f.policy.seen_jobs[0].id, 8u);
  EXPECT_EQ(f.policy.seen_nodes[0].gpus, 3);
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[1].job, 0u);
  EXPECT_EQ(r.decisions[1].action, Action::kNone);
  EXPECT_EQ(r.decisions[1].state.phase, Phase::kRunning);
}

// The restart time a job's agent measured (its hint's restart_seconds) is
// the job's D: in the policy's restart factor (JobInfo::restart_delay)
// and in whether its time limit leaves room for a resize (two restarts);
// a job that has reported none has pollux_restart_penalty.
TEST(Round, AJobsMeasuredRestartTimeIsItsRestartPenalty) {
  Fixture f;  // pollux_restart_penalty 30 s
  ElasticJobSnapshot j = running_job(7, on({{0, 1}}), f.snap.nodes);
  j.state->limit = 3;  // 180 s, 30 used before this run's 50: 100 s left
  j.state->used = 30;
  f.add(j);
  f.add(pending_job(8));
  f.inputs[0].restart_seconds = 60;
  f.inputs[1].restart_seconds = 200;
  f.policy.answer = {on({{1, 4}})};
  f.run();
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u) << "100 s left is less than two of its 60 s restarts: job 7 stays";
  EXPECT_EQ(f.policy.seen_jobs[0].restart_delay, 200);
  // 12.5 s measured: the penalty (30 s) is the floor, and two fit in 100 s.
  f.inputs[0].restart_seconds = 12.5;
  f.policy.answer = {on({{0, 4}}), on({{1, 4}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 2u);
  EXPECT_EQ(f.policy.seen_jobs[0].restart_delay, 30);
  EXPECT_EQ(f.policy.seen_jobs[1].restart_delay, 200);
  const auto of_job = [&](std::size_t i) {
    return *std::find_if(r.decisions.begin(), r.decisions.end(), [&](const JobDecision& d) { return d.job == i; });
  };
  EXPECT_EQ(of_job(0).action, Action::kSignal);
}

// Slurm's power saving: a node powered down or booting is capacity (the
// policy gets its GPUs), and the boot a job placed there may wait for
// counts in its restart cost: in JobInfo::restart_delay, once, and only
// for a job that may run on such a node.
TEST(Round, ABootAJobMayWaitForIsInItsRestartCost) {
  Fixture f;  // pollux_restart_penalty 30 s
  f.snap.nodes[2].power = Power::kOff;
  f.snap.nodes[2].boot_wait = 40;
  f.snap.nodes[3].power = Power::kBooting;
  f.snap.nodes[3].boot_wait = 5;
  f.add(pending_job(7));
  ElasticJobSnapshot k = pending_job(8);
  k.allowed = {true, true, false, true};  // not on node 2
  f.add(k);
  f.inputs[1].restart_seconds = 100;
  f.policy.answer = {on({{2, 4}}), on({{3, 4}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 2u);
  EXPECT_EQ(f.policy.seen_jobs[0].restart_delay, 30 + 40);
  EXPECT_EQ(f.policy.seen_jobs[1].restart_delay, 100 + 5);
  ASSERT_EQ(f.policy.seen_nodes.size(), 4u);
  EXPECT_EQ(f.policy.seen_nodes[2].gpus, 4) << "a powered-down node's GPUs are the policy's to place";
  // Every node on: nothing added.
  for (NodeSnapshot& n : f.snap.nodes) n.power = Power::kOn;
  f.run();
  EXPECT_EQ(f.policy.seen_jobs[0].restart_delay, 30);
}

TEST(Round, BackfillSeesARunningJobWithoutATimeLimitEndWhenItWouldMakeRoom) {
  Fixture f;
  ElasticJobSnapshot j = running_job(7, on({{0, 4}}), f.snap.nodes);
  j.end_time = kNow + 365 * 86400.0;  // Slurm's for a job without a time limit
  f.add(j);
  f.policy.answer = {on({{0, 4}})};
  const double end = kNow + f.params.interval + f.params.checkpoint_timeout + 60;
  EXPECT_EQ(expected_end(kNow, f.params), end);
  EXPECT_EQ(f.run().decisions[0].expected_end, end);
  f.snap.jobs[0].end_time = end - f.params.interval + 5;  // set a round ago: left
  EXPECT_EQ(f.run().decisions[0].expected_end, 0);
  f.snap.jobs[0].end_time = end - f.params.interval - 5;  // older: moved on
  EXPECT_EQ(f.run().decisions[0].expected_end, end);
  f.snap.jobs[0].time_limit = 60;  // a time limit: Slurm's end is the real one
  EXPECT_EQ(f.run().decisions[0].expected_end, 0);
}

TEST(Round, ABeginTimeInTheFutureBlocksUnlessARequeueSetIt) {
  ElasticJobSnapshot j = pending_job(7);
  j.begin_time = kNow + 60;
  EXPECT_EQ(cannot_start(j, kNow), "begin");
  EXPECT_EQ(cannot_start(j, kNow + 60), "");
  j.restarts = 1;  // requeued by sched/pollux 5 s ago: Slurm's credential window
  j.state = state(Phase::kStarting, Alloc{1, 4, "n1"}, kNow - 5);
  EXPECT_EQ(cannot_start(j, kNow), "");
  j.begin_time = kNow - 5 + kRequeueParking;  // sched/pollux's own parking after its requeue
  EXPECT_EQ(cannot_start(j, kNow), "");
  j.begin_time = kNow - 5 + kRequeueWindow + 600;  // set later, by someone else
  EXPECT_EQ(cannot_start(j, kNow), "begin");
  j.running = true;
  EXPECT_EQ(cannot_start(j, kNow), "");
}

// Slurm requeued a running job: n2 failed (or was set DOWN), and Slurm
// killed the job and requeued it (restart count up, a begin time of its
// credential window). Its state still says it runs on n1,n2.
ElasticJobSnapshot requeued_by_slurm(const std::vector<NodeSnapshot>& nodes) {
  ElasticJobSnapshot j = running_job(7, on({{0, 4}, {1, 4}}), nodes);
  j.running = false;
  j.current = {};
  j.restarts = 1;
  j.state->since = kNow - 7200;  // running for two hours
  j.begin_time = kNow + 11;  // Slurm's wait: cred_expire + 1
  j.end_time = kNow - 1;     // Slurm's end of the run, at the requeue
  j.completing = true;
  return j;
}

TEST(Round, AJobSlurmRequeuedAfterANodeFailedIsPlacedAfreshByTheArrivalsRound) {
  Fixture f;
  f.snap.nodes[1].usable = false;  // n2: DOWN
  f.add(requeued_by_slurm(f.snap.nodes));
  f.policy.answer = {on({{0, 4}})};
  const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);  // asked at once: its old nodes are no promise
  EXPECT_TRUE(f.policy.seen_current[0].empty());
  EXPECT_EQ(f.policy.seen_nodes[1].gpus, 0);
  // Its restart count does not make Pollux's restart factor 0 (the job
  // holds nothing: placing it restarts nothing).
  EXPECT_GE(f.policy.seen_jobs[0].age, 2 * f.params.restart_penalty);
  const JobDecision& d = r.decisions[0];
  EXPECT_EQ(d.action, Action::kRelease);  // no checkpoint waited for
  EXPECT_EQ(d.state.phase, Phase::kStarting);
  EXPECT_EQ(d.state.alloc, (Alloc{1, 4, "n1"}));
  EXPECT_EQ(d.state.why, "requeued");
  EXPECT_NE(d.note.find("n2 failed"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("restarts from its last checkpoint, on n1"), std::string::npos) << d.note;
  EXPECT_EQ(cannot_start(f.snap.jobs[0], kNow), "");  // Slurm's wait is not a user's begin time
  // The round after: an ordinary start, nothing more to say.
  f.snap.jobs[0].state = d.state;
  f.snap.jobs[0].decided = on({{0, 4}});
  f.snap.jobs[0].held_by_pollux = false;
  const RoundResult next = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  EXPECT_EQ(next.decisions[0].action, Action::kNone);
  EXPECT_TRUE(next.decisions[0].note.empty());
}

TEST(Round, AJobRequeuedByAnOperatorRestartsWhereItRan) {
  Fixture f;
  f.add(requeued_by_slurm(f.snap.nodes));  // every node usable: scontrol requeue
  const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  EXPECT_TRUE(f.policy.seen_jobs.empty());
  EXPECT_EQ(r.decisions[0].action, Action::kRelease);
  EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{2, 4, "n1,n2"}));
  EXPECT_EQ(r.decisions[0].state.why, "requeued");
  EXPECT_NE(r.decisions[0].note.find("by an operator"), std::string::npos) << r.decisions[0].note;
}

// The issue 34 case: the job ran on n1 and was checkpointing to grow onto
// n1,n2 when n1 failed; the log names n1, where it ran, not the grow's nodes.
TEST(Round, SlurmsRequeueOfAJobCheckpointingForAGrowNamesTheNodesItRanOn) {
  Fixture f;
  f.snap.nodes[0].usable = false;  // n1: DOWN
  ElasticJobSnapshot j = requeued_by_slurm(f.snap.nodes);
  j.state = state(Phase::kCheckpointing, Alloc{2, 4, "n1,n2"}, kNow - 20, "grow");
  j.state->from = {1, 4, "n1"};
  f.add(j);
  f.policy.answer = {on({{2, 4}})};
  const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  const JobDecision& d = r.decisions[0];
  EXPECT_EQ(d.action, Action::kRelease);
  EXPECT_EQ(d.state.why, "requeued");
  EXPECT_NE(d.note.find("its run on n1 was ended by Slurm's requeue (n1 failed"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("restarts from its last checkpoint, on n3"), std::string::npos) << d.note;
  EXPECT_TRUE(d.state.from.empty());
}

// A job whose program has no agent (it never wrote a hint) keeps no
// checkpoint sched/pollux knows of: its script starts over, and the log
// says so rather than promising a checkpoint.
TEST(Round, SlurmsRequeueOfAJobWithoutAnAgentSaysItStartsOver) {
  Fixture f;
  f.snap.nodes[1].usable = false;
  f.add(requeued_by_slurm(f.snap.nodes));
  f.inputs[0] = JobInput{};  // no hint
  const JobDecision d = plan_round(f.snap, f.inputs, f.params, &f.policy, true).decisions[0];
  EXPECT_EQ(d.note.find("checkpoint"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("its run on n1,n2 was ended by Slurm's requeue (n2 failed"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("; it has no agent (no hint): its batch script runs again from the beginning, "),
            std::string::npos)
      << d.note;
}

TEST(Round, APromiseOnANodeThatFailedIsPlacedAfresh) {
  Fixture f;
  f.add(starting_job(8, on({{2, 2}}), f.snap.nodes));
  f.snap.nodes[2].usable = false;
  f.policy.answer = {on({{3, 2}})};
  const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, true);
  ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
  EXPECT_EQ(r.decisions[0].action, Action::kRelease);
  EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{1, 2, "n4"}));
}

// Right after a slurmctld restart every node awaits its registration
// (UNKNOWN, not usable for new work): what was decided before the restart
// is carried out, not decided afresh (issue 34: a requeued job's promise
// was dropped, and the job came back on its old node).
void awaiting_registration(std::vector<NodeSnapshot>& nodes) {
  for (NodeSnapshot& n : nodes) {
    n.usable = false;
    n.awaiting_registration = true;
  }
}

TEST(Round, APromiseOnANodeAwaitingRegistrationStands) {
  Fixture f;
  ElasticJobSnapshot j = starting_job(8, on({{0, 1}}), f.snap.nodes);  // requeued, shrunk to n1
  j.restarts = 1;
  j.state->why = "shrink";
  f.add(j);
  f.add(pending_job(9));  // held: nothing is placed for it on an unknown node
  awaiting_registration(f.snap.nodes);
  for (bool arrivals : {false, true}) {
    f.policy.answer = {{}};
    const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, arrivals);
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
    EXPECT_EQ(f.policy.seen_jobs[0].id, 9u);
    for (const NodeInfo& n : f.policy.seen_nodes) EXPECT_EQ(n.gpus, 0);
    const JobDecision& d = r.decisions[0];
    EXPECT_EQ(d.action, Action::kNone);
    EXPECT_EQ(d.state.phase, Phase::kStarting);
    EXPECT_EQ(d.state.alloc, (Alloc{1, 1, "n1"}));
    EXPECT_EQ(d.state.why, "shrink");
    EXPECT_EQ(d.state.since, kNow - 5);
  }
  // A node that failed is no promise: placed afresh, as before.
  f.snap.nodes[0].awaiting_registration = false;
  f.run();
  EXPECT_EQ(f.policy.seen_jobs.size(), 2u);
}

// Its nodes registered, a promise made before the restart still stands
// until Slurm starts the job there (the slurm.restart failure in CI's
// 24.11 run: a round 3 s after the restart moved a requeued job's promise
// from 2x3 GPUs to 1x4 before Slurm could start it), for
// kRestartPromiseHold after the load; a promise made since is the policy's.
TEST(Round, APromiseMadeBeforeARestartStandsUntilSlurmStartsTheJob) {
  Fixture f;
  ElasticJobSnapshot j = starting_job(8, on({{0, 1}}), f.snap.nodes);  // promised at kNow - 5
  j.restarts = 1;
  j.state->why = "shrink";
  f.add(j);
  f.add(pending_job(9));
  f.snap.loaded = kNow - 3;
  for (bool arrivals : {false, true}) {
    f.policy.answer = {on({{1, 2}})};
    const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, arrivals);
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_EQ(f.policy.seen_jobs.size(), 1u);
    EXPECT_EQ(f.policy.seen_jobs[0].id, 9u);
    EXPECT_EQ(f.policy.seen_nodes[0].gpus, 3);  // its promise taken out
    EXPECT_EQ(r.decisions[0].action, Action::kNone);
    EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{1, 1, "n1"}));
    EXPECT_EQ(r.decisions[0].state.why, "shrink");
  }
  // Past the hold, or promised by this slurmctld: the policy decides.
  for (double loaded : {kNow - kRestartPromiseHold, kNow - 6}) {
    f.snap.loaded = loaded;
    f.policy.answer = {on({{1, 2}}), {}};
    const RoundResult r = f.run();
    EXPECT_EQ(f.policy.seen_jobs.size(), 2u) << loaded;
    EXPECT_EQ(r.decisions[0].action, Action::kRelease) << loaded;
    EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{1, 2, "n2"})) << loaded;
  }
}

TEST(Round, ACheckpointsMoveDecidedBeforeARestartIsCarriedOut) {
  Fixture f;
  // Shrinking from 1x2 on n2 to 1x1 on n1 for a rigid job that waits for n2.
  ElasticJobSnapshot j = running_job(5, on({{1, 2}}), f.snap.nodes);
  j.state = state(Phase::kCheckpointing, Alloc{1, 1, "n1"}, kNow - 3, "shrink");
  j.decided = on({{0, 1}});
  f.add(j);
  f.add(running_job(6, on({{2, 4}}), f.snap.nodes));
  f.snap.rigid_queue.push_back({1, 2, 0, ""});
  awaiting_registration(f.snap.nodes);
  f.policy.answer = {on({{1, 2}})};  // back to its old node: never asked
  RoundResult r = f.run();
  EXPECT_TRUE(f.policy.seen_jobs.empty());
  EXPECT_EQ(r.decisions[0].action, Action::kNone);
  EXPECT_EQ(r.decisions[0].state.phase, Phase::kCheckpointing);
  EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{1, 1, "n1"}));
  EXPECT_EQ(r.decisions[1].action, Action::kNone);  // running where it ran
  EXPECT_EQ(r.decisions[1].state.alloc, (Alloc{1, 4, "n3"}));
  // Acknowledged: requeued towards n1.
  f.inputs[0].checkpoint_ack = kNow - 1;
  r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kRequeue);
  EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{1, 1, "n1"}));
  EXPECT_EQ(r.decisions[0].state.why, "shrink");
}

TEST(Round, TheTimeLimitCountsRunsEndedBySlurmsRequeues) {
  Fixture f;
  ElasticJobSnapshot j = running_job(7, on({{0, 4}}), f.snap.nodes);
  j.state->limit = 10;
  j.state->used = 60;
  f.add(j);
  f.policy.answer = {on({{0, 4}})};
  JobDecision d = f.run().decisions[0];
  EXPECT_EQ(d.state.run, kNow - 50);  // the run is recorded
  EXPECT_EQ(d.state.used, 60);
  // Slurm requeued it 40 s into the run (its EndTime).
  ElasticJobSnapshot& p = f.snap.jobs[0];
  p.state = d.state;
  p.running = false;
  p.current = {};
  p.restarts = 1;
  f.inputs[0].hint_restarts = 1;  // its new run's agent listens
  p.end_time = kNow - 10;
  p.begin_time = kNow + 11;
  d = f.run().decisions[0];
  EXPECT_EQ(d.state.used, 100);
  EXPECT_EQ(d.state.run, 0);
  EXPECT_EQ(next_run_limit(d.state), 9);  // ceil((600 - 100) / 60)
  EXPECT_EQ(d.action, Action::kRelease);  // with that limit (enact.cc: set_size)
  // No usable EndTime (a later one, e.g. backfill's plan): counted to now.
  p.end_time = kNow + 500;
  EXPECT_EQ(f.run().decisions[0].state.used, 110);
  // Requeued and started again between two rounds: counted to the new start.
  p.running = true;
  p.current = on({{0, 4}});
  p.start_time = kNow - 5;
  d = f.run().decisions[0];
  EXPECT_EQ(d.state.used, 105);
  EXPECT_EQ(d.state.run, kNow - 5);
  // sched/pollux's own requeue counts its run once.
  p.state = d.state;
  p.state->phase = Phase::kCheckpointing;
  p.state->since = kNow - 1;
  p.state->alloc = Alloc{1, 4, "n2"};
  f.inputs[0].checkpoint_ack = kNow;
  f.policy.answer = {on({{1, 4}})};
  d = f.run().decisions[0];
  EXPECT_EQ(d.action, Action::kRequeue);
  EXPECT_EQ(d.state.used, 110);
  EXPECT_EQ(d.state.run, 0);
}

TEST(Round, ThePolicySharesOnlyWhatRigidJobsLeave) {
  Fixture f;
  f.snap.nodes[0].rigid_gpus = 3;
  f.snap.nodes[1].usable = false;  // drained
  f.add(running_job(8, on({{1, 2}}), f.snap.nodes));
  f.policy.answer = {on({{1, 2}})};
  f.run();
  ASSERT_EQ(f.policy.seen_nodes.size(), 4u);
  EXPECT_EQ(f.policy.seen_nodes[0].gpus, 1);
  EXPECT_EQ(f.policy.seen_nodes[1].gpus, 2);  // the running job may stay, nothing new comes
  EXPECT_EQ(f.policy.seen_nodes[2].gpus, 4);
}

TEST(Round, GpusAreKeptForRigidJobsAtTheHeadOfTheQueue) {
  Fixture f;
  f.snap.rigid_queue = {RigidRequest{2, 4, 0, ""}, RigidRequest{1, 0, 3, ""}, RigidRequest{4, 4, 0, ""}};
  f.add(running_job(8, on({{0, 4}}), f.snap.nodes));
  f.policy.answer = {on({{0, 1}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  // 2 whole nodes where the elastic job is not (n2, n3), then 3 GPUs (n4);
  // the third request no longer fits: first come, first served.
  EXPECT_EQ(r.reserved_gpus, 11);
  EXPECT_EQ(f.policy.seen_nodes[0].gpus, 4);
  EXPECT_EQ(f.policy.seen_nodes[1].gpus, 0);
  EXPECT_EQ(f.policy.seen_nodes[2].gpus, 0);
  EXPECT_EQ(f.policy.seen_nodes[3].gpus, 1);
}

TEST(Round, APromiseThatNoLongerFitsIsNotShownAsCurrent) {
  Fixture f;
  f.add(starting_job(7, on({{0, 4}}), f.snap.nodes));
  f.snap.nodes[0].rigid_gpus = 2;  // a rigid job took half of n1 meanwhile
  f.policy.answer = {on({{1, 4}})};
  const RoundResult r = f.run();
  EXPECT_TRUE(f.policy.seen_current[0].empty());
  EXPECT_EQ(r.decisions[0].action, Action::kRelease);
  EXPECT_EQ(r.decisions[0].state.alloc, (Alloc{1, 4, "n2"}));
}

TEST(Round, AnAnswerOutsideAJobsRangeIsNotUsed) {
  for (const Placement& bad : {on({{0, 4}, {1, 4}}), on({{0, 3}, {1, 1}}), on({{0, 4}, {0, 4}})}) {
    Fixture f;
    f.add(pending_job(7, ElasticRange{1, 1, 4}));
    f.add(running_job(8, on({{2, 4}}), f.snap.nodes));
    f.policy.answer = {bad, on({{3, 4}})};
    const RoundResult r = f.run();
    EXPECT_FALSE(r.error.empty());
    EXPECT_EQ(r.decisions[0].action, Action::kHold);
    EXPECT_EQ(r.decisions[1].action, Action::kNone);  // nothing moves on a bad answer
  }
}

// RoundRules (pollux-sim's paper runs): with uniform_placements off, a
// placement of the job's node range with at most its GPUs per node on
// each node is used as it is (JobDecision::placement), and the job's
// speedup counts every size; by default (sched/pollux) neither.
TEST(Round, RoundRulesMayAllowNonUniformPlacements) {
  const Placement uneven = on({{0, 3}, {1, 1}});
  for (const bool uniform : {true, false}) {
    Fixture f;
    f.add(pending_job(7));
    f.add(running_job(8, on({{2, 4}}), f.snap.nodes));
    f.policy.answer = {uneven, on({{3, 4}})};
    RoundRules rules;
    rules.uniform_placements = uniform;
    const RoundResult r = plan_round(f.snap, f.inputs, f.params, &f.policy, false, nullptr, rules);
    ASSERT_EQ(f.policy.seen_jobs.size(), 2u);
    // No model yet: linear, at uniform sizes only (0 for 3 GPUs on 2
    // nodes), or everywhere (an empty function, as the policies read it).
    const SpeedupFn& speedup = f.policy.seen_jobs[0].speedup;
    if (uniform) {
      EXPECT_EQ(speedup(2, 4), 4.0);
      EXPECT_EQ(speedup(2, 3), 0.0);
    } else {
      EXPECT_FALSE(speedup);
    }
    if (uniform) {
      EXPECT_NE(r.error.find("outside its range"), std::string::npos) << r.error;
      EXPECT_EQ(r.decisions[0].action, Action::kHold);
      EXPECT_EQ(r.decisions[1].action, Action::kNone);
      EXPECT_EQ(r.decisions[1].placement, on({{2, 4}}));  // kept where it runs
    } else {
      EXPECT_TRUE(r.error.empty()) << r.error;
      EXPECT_EQ(r.decisions[0].action, Action::kRelease);
      EXPECT_EQ(r.decisions[0].placement, uneven);
      EXPECT_EQ(r.decisions[1].action, Action::kSignal);  // to checkpoint for the move
      EXPECT_EQ(r.decisions[1].placement, on({{3, 4}}));
    }
  }
  EXPECT_TRUE(RoundRules{}.uniform_placements);  // sched/pollux's, plan_round's default
  // Still within the range's GPUs per node and nodes.
  Fixture f;
  f.add(pending_job(7, ElasticRange{1, 2, 2}));
  f.policy.answer = {on({{0, 3}, {1, 1}})};
  RoundRules any;
  any.uniform_placements = false;
  EXPECT_NE(plan_round(f.snap, f.inputs, f.params, &f.policy, false, nullptr, any).error.find("outside its range"),
            std::string::npos);
}

// JobInput::attained_service (pollux-sim: a job's whole life) is what the
// policy orders jobs by; without it, the current run's GPU-seconds.
TEST(Round, TheAttainedServiceIsTheInputsWhereGiven) {
  Fixture f;
  f.add(running_job(8, on({{2, 4}}), f.snap.nodes));  // started 50 s ago on 4 GPUs
  f.policy.answer = {on({{2, 4}})};
  f.run();
  EXPECT_EQ(f.policy.seen_jobs[0].attained_service, 200.0);
  f.inputs[0].attained_service = 5000.0;
  f.run();
  EXPECT_EQ(f.policy.seen_jobs[0].attained_service, 5000.0);
}

TEST(Round, AnAnswerOverCapacityIsNotUsed) {
  Fixture f;
  f.add(pending_job(7));
  f.add(pending_job(8));
  f.policy.answer = {on({{0, 4}}), on({{0, 4}})};
  const RoundResult r = f.run();
  EXPECT_FALSE(r.error.empty());
  EXPECT_EQ(r.decisions[0].action, Action::kHold);
}

TEST(Round, AFailingPolicyChangesNothing) {
  Fixture f;
  f.add(running_job(8, on({{2, 4}}), f.snap.nodes));
  f.policy.throws = true;
  const RoundResult r = f.run();
  EXPECT_NE(r.error.find("scripted failure"), std::string::npos);
  EXPECT_EQ(r.decisions[0].action, Action::kNone);
}

TEST(Round, TheModelBoundsTheGpusAJobCanUse) {
  Fixture f;
  f.add(pending_job(7));
  Hint h;
  h.limits = BatchLimits{64, 256, 64, 256, true};  // at most 4 replicas of 64
  h.perf = PerfParams{};
  h.grad = GradStats{1, 1};
  f.inputs[0].model = model_from_hint(h);
  ASSERT_TRUE(f.inputs[0].model);
  f.policy.answer = {on({{0, 4}})};
  const RoundResult r = f.run();
  EXPECT_EQ(f.policy.seen_jobs[0].max_replicas, 4);
  EXPECT_TRUE(r.decisions[0].view.has_model);
  EXPECT_NE(r.decisions[0].comment.find("goodput="), std::string::npos);
}

// A suspended job (scontrol suspend): Slurm keeps its GPUs, so the policy
// neither sees it nor gives its GPUs away; its state says suspended (a
// checkpoint for a resize is called off); its time limit does not count
// the run as ended. Resumed, it runs again at its size.
TEST(Round, ASuspendedJobKeepsItsGpusAndSaysSo) {
  for (Phase before : {Phase::kRunning, Phase::kCheckpointing}) {
    Fixture f;
    ElasticJobSnapshot j = running_job(8, on({{0, 4}, {1, 4}}), f.snap.nodes);
    j.running = false;
    j.suspended = true;
    j.restarts = 1;  // not taken for a job Slurm requeued
    j.state->phase = before;
    j.state->limit = 60;
    j.state->run = kNow - 50;
    if (before == Phase::kCheckpointing) j.state->alloc = Alloc{1, 4, "n3"};
    f.add(j);
    f.inputs[0].hint_restarts = 1;
    f.add(pending_job(9));
    f.policy.answer = {on({{2, 4}, {3, 4}})};
    const RoundResult r = f.run();
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_EQ(f.policy.seen_jobs.size(), 1u) << "the suspended job was given to the policy";
    EXPECT_EQ(f.policy.seen_nodes[0].gpus + f.policy.seen_nodes[1].gpus, 0) << "its GPUs were given away";
    ASSERT_EQ(r.decisions.size(), 2u);
    const JobDecision& d = r.decisions[0].job == 0 ? r.decisions[0] : r.decisions[1];
    EXPECT_EQ(d.action, Action::kNone);
    EXPECT_EQ(d.state.phase, Phase::kSuspended);
    EXPECT_EQ(d.state.alloc, (Alloc{2, 4, "n1,n2"}));
    EXPECT_EQ(d.state.since, kNow);
    EXPECT_EQ(d.state.used, 0) << "its run was counted as ended";
    EXPECT_EQ(d.state.run, kNow - 50);
    EXPECT_TRUE(d.note.empty()) << d.note;
    EXPECT_NE(d.comment.find("| state=suspended range=1-4x4 alloc=2x4@n1,n2 "), std::string::npos) << d.comment;
    EXPECT_EQ(d.view.gpus, 8);
    const auto back = parse_comment(d.comment);
    ASSERT_TRUE(back) << d.comment;
    EXPECT_EQ(back->phase, Phase::kSuspended);
  }
  // Resumed: running again at its size, left there when the policy keeps it.
  Fixture f;
  ElasticJobSnapshot j = running_job(8, on({{0, 4}, {1, 4}}), f.snap.nodes);
  j.state->phase = Phase::kSuspended;
  f.add(j);
  f.policy.answer = {on({{0, 4}, {1, 4}})};
  const RoundResult r = f.run();
  EXPECT_EQ(r.decisions[0].action, Action::kNone);
  EXPECT_EQ(r.decisions[0].state.phase, Phase::kRunning);
  EXPECT_EQ(r.decisions[0].state.since, kNow);
}

// Why a running job the policy kept at its size did not grow (cap=; why=
// stays its last decision): at its largest size, at twice what it was
// profiled on, no larger size fits in what is free to it, or the policy
// judged a grow not worth a restart.
TEST(Round, AJobKeptAtItsSizeSaysWhyItDidNotGrow) {
  struct Case {
    const char* name;
    ElasticRange range;
    int profiled;
    int rigid_on_others;  // GPUs of n2..n4 held by rigid jobs (the job then runs on n1 alone)
    const char* why;
  };
  for (const Case& c : {Case{"its range's largest size", {1, 2, 4}, 8, 0, "at-max"},
                        Case{"twice its profile", {1, 4, 4}, 4, 0, "profiled"},
                        Case{"nothing free", {1, 4, 4}, 8, 4, "no-free-gpus"},
                        Case{"the policy's choice", {1, 4, 4}, 8, 0, "restart-cost"}}) {
    Fixture f;
    for (std::size_t n = 1; n < 4; ++n) f.snap.nodes[n].rigid_gpus = c.rigid_on_others;
    const Placement at = c.rigid_on_others > 0 ? on({{0, 4}}) : on({{0, 4}, {1, 4}});
    ElasticJobSnapshot j = running_job(8, at, f.snap.nodes);
    j.range = c.range;
    f.add(j, c.profiled);
    f.policy.answer = {at};
    const RoundResult r = f.run();
    EXPECT_TRUE(r.error.empty()) << c.name << ": " << r.error;
    EXPECT_EQ(r.decisions[0].action, Action::kNone) << c.name;
    EXPECT_EQ(r.decisions[0].view.cap, c.why) << c.name;
    EXPECT_EQ(r.decisions[0].state.why, "start") << c.name;
    EXPECT_NE(r.decisions[0].comment.find(std::string(" why=start cap=") + c.why + " "), std::string::npos)
        << r.decisions[0].comment;
    EXPECT_EQ(parse_comment_cap(r.decisions[0].comment), c.why);
  }
  {  // the GPUs of a node the job may not use are not free to it
    Fixture f;
    ElasticJobSnapshot j = running_job(8, on({{0, 4}, {1, 4}}), f.snap.nodes);
    j.allowed = {true, true, false, false};
    f.add(j);
    f.policy.answer = {j.current};
    EXPECT_EQ(f.run().decisions[0].view.cap, "no-free-gpus");
  }
  // A round that did not ask the policy about it (a light round, an
  // arrivals round, a policy answer not used) keeps what its comment says
  // while it runs on at that size; none was said: none.
  Fixture f;
  f.add(running_job(8, on({{0, 4}, {1, 4}}), f.snap.nodes));
  EXPECT_EQ(f.run(false).decisions[0].view.cap, "");
  f.snap.jobs[0].system_comment = "pollux: gpus=8 nodes=2 why=start cap=profiled | state=run range=1-4x4 alloc=2x4@n1,n2 since=5";
  EXPECT_EQ(f.run(false).decisions[0].view.cap, "profiled");
  f.policy.answer = {on({{0, 4}, {1, 4}}), on({{2, 4}})};  // one placement too many: not used
  EXPECT_EQ(f.run().decisions[0].view.cap, "profiled");
  EXPECT_EQ(plan_round(f.snap, f.inputs, f.params, &f.policy, true).decisions[0].view.cap, "profiled");
  f.policy.answer = {on({{0, 4}, {1, 4}, {2, 4}})};  // grown: the cap goes
  EXPECT_EQ(f.run().decisions[0].view.cap, "");
}

// A running job whose hint is missing while the spool is full (its agent
// cannot write one) says so, and stops saying so when it has one again.
TEST(Round, AJobWithoutAHintInAFullSpoolSaysWhy) {
  Fixture f;
  f.snap.spool_full = true;
  f.add(running_job(8, on({{0, 4}}), f.snap.nodes));
  f.inputs[0] = JobInput{};  // no hint: moldable
  f.add(running_job(9, on({{1, 4}}), f.snap.nodes));  // its hint was written before the spool filled up
  f.policy.answer = {on({{1, 4}})};
  RoundResult r = f.run();
  EXPECT_EQ(r.decisions[1].job, 0u);
  EXPECT_EQ(r.decisions[1].view.cap, "spool-full") << r.decisions[1].comment;
  EXPECT_EQ(r.decisions[1].state.why, "start");
  EXPECT_NE(r.decisions[1].comment.find(" kind=moldable "), std::string::npos);
  EXPECT_NE(r.decisions[1].comment.find(" why=start cap=spool-full "), std::string::npos) << r.decisions[1].comment;
  EXPECT_EQ(r.decisions[0].job, 1u);
  EXPECT_NE(r.decisions[0].view.cap, "spool-full");
  // Room again (no hint yet), then a hint: the reason goes.
  f.snap.jobs[0].system_comment = r.decisions[1].comment;
  f.snap.spool_full = false;
  r = f.run();
  EXPECT_EQ(r.decisions[1].view.cap, "") << r.decisions[1].comment;
  f.snap.spool_full = true;
  f.inputs[0].resize_signal = SIGUSR1;
  f.inputs[0].hint_restarts = 0;
  f.policy.answer = {on({{0, 4}}), on({{1, 4}})};
  r = f.run();
  for (const JobDecision& d : r.decisions) EXPECT_NE(d.view.cap, "spool-full") << d.comment;
}

TEST(Round, PlacementsAndAllocsConvertBothWays) {
  const auto nodes = four_nodes();
  const Placement p = on({{1, 2}, {3, 2}});
  const Alloc a = to_alloc(p, nodes);
  EXPECT_EQ(a, (Alloc{2, 2, "n2,n4"}));
  EXPECT_EQ(to_placement(a, nodes), p);
  EXPECT_TRUE(to_placement(Alloc{1, 2, "n9"}, nodes).empty());
  EXPECT_TRUE(to_placement(Alloc{2, 2, "n1"}, nodes).empty());
  EXPECT_EQ(node_list(p, nodes), "n2,n4");
}

}  // namespace
}  // namespace pollux::sched

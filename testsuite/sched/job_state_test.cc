// The state words (job_state.h): each reads back from the SystemComment
// as written, and a word this version does not know is refused, and said.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "sched/job_comment.h"
#include "sched/job_state.h"
#include "sched/job_transitions.h"

namespace pollux::sched {
namespace {

JobState held_state(Why why) {
  JobState s;
  s.range = {1, 4, 4};
  s.phase = Phase::kHeld;
  s.since = 1700000000;
  s.submit = 1699999000;
  s.why = why;
  return s;
}

TEST(JobState, EveryReasonRoundTripsThroughTheComment) {
  std::set<std::string> texts;
  for (int w = 0; w < Why::kCount; ++w) {
    const Why why(static_cast<Why::Word>(w));
    const std::string comment = format_comment(JobView{}, held_state(why));
    std::string problem = "unset";
    const auto back = parse_comment(comment, &problem);
    ASSERT_TRUE(back) << comment;
    EXPECT_EQ(back->why, why) << comment;
    EXPECT_EQ(problem, "") << comment;
    EXPECT_EQ(parse_why(why.text()), why);
    EXPECT_EQ(Why(why.c_str()), why);
    EXPECT_TRUE(texts.insert(why.c_str()).second) << "two reasons are written " << why;
    EXPECT_EQ(why.empty(), w == Why::kNone);
    EXPECT_EQ(comment.find(" why=") != std::string::npos, w != Why::kNone) << comment;
  }
}

TEST(JobState, EveryPhaseNameReadsBack) {
  for (Phase ph :
       {Phase::kHeld, Phase::kStarting, Phase::kRunning, Phase::kCheckpointing, Phase::kEnded, Phase::kSuspended})
    EXPECT_EQ(parse_phase(phase_name(ph)), ph) << phase_name(ph);
  EXPECT_FALSE(parse_phase("sleep"));
  EXPECT_FALSE(parse_phase(""));
}

TEST(JobState, AnUnknownReasonIsReadAsNoneAndSaidSo) {
  const std::string comment = "pollux: gpus=0 nodes=0 why=hibernate | state=held range=1-4x4 alloc=0 since=5";
  std::string problem;
  const auto s = parse_comment(comment, &problem);
  ASSERT_TRUE(s) << "the rest of the state still holds";
  EXPECT_EQ(s->phase, Phase::kHeld);
  EXPECT_TRUE(s->why.empty());
  EXPECT_EQ(problem, "why=hibernate in its SystemComment is no reason sched/pollux writes: read as none");
  EXPECT_FALSE(parse_why("hibernate"));
  EXPECT_FALSE(parse_why("Grow"));  // exact words only
  EXPECT_THROW(Why("hibernate"), std::invalid_argument);
}

TEST(JobState, EveryHoldReasonIsSchedPolluxsOwn) {
  for (int w = 0; w < Why::kCount; ++w) {
    const std::string text = hold_reason_for(static_cast<Why::Word>(w), "X");
    EXPECT_EQ(text.rfind(kHoldPrefix, 0), 0u) << text;
  }
  EXPECT_EQ(hold_reason_for(Why::kWait), "pollux: waiting for GPUs");
  EXPECT_EQ(hold_reason_for(Why::kStart), "pollux: waiting for GPUs");
  EXPECT_EQ(hold_reason_for(Why::kLimits), "pollux: no size Slurm allows");
  EXPECT_EQ(hold_reason_for(Why::kLimits, "QOSMaxNodePerJobLimit"),
            "pollux: no size Slurm allows (QOSMaxNodePerJobLimit)");
  EXPECT_EQ(hold_reason_for(Why::kRefused), "pollux: Slurm refused its size (BadConstraints)");
  EXPECT_EQ(hold_reason_for(Why::kRefused, "PartitionNodeLimit"), "pollux: Slurm refused its size (PartitionNodeLimit)");
  EXPECT_EQ(hold_reason_for(Why::kDependency, "ignored"), "pollux: waiting for its dependency");
}

// The transitions (job_transitions.h) change a phase, its `since`, the
// size and the reason together.
TEST(JobTransitions, HoldAndReleaseMoveSinceOnlyWhenThePhaseChanges) {
  JobState s = adopted_state({1, 4, 4}, 100, 90, Why::kWait);
  hold(s, Why::kDependency, 200);
  EXPECT_EQ(s.since, 100) << "held already";
  EXPECT_EQ(s.why, Why::kDependency);
  release(s, {1, 4, "n1"}, 300);
  EXPECT_EQ(s.phase, Phase::kStarting);
  EXPECT_EQ(s.since, 300);
  EXPECT_EQ(s.why, Why::kStart);
  s.why = Why::kGrow;
  release(s, {2, 4, "n1,n2"}, 310);  // a new promise while starting: the reason stays
  EXPECT_EQ(s.why, Why::kGrow);
  hold(s, Why::kWait, 400);
  EXPECT_EQ(s.since, 400);
  EXPECT_TRUE(s.alloc.empty());
}

TEST(JobTransitions, AResizeThroughItsCheckpoint) {
  JobState s = adopted_state({1, 4, 4}, 100, 90, Why::kNone);
  s.limit = 10;
  run_at(s, {1, 4, "n1"}, 200);
  EXPECT_EQ(s.phase, Phase::kRunning);
  EXPECT_EQ(s.since, 200);
  signal_resize(s, {1, 4, "n1"}, {2, 4, "n1,n2"}, Why::kGrow, 300);
  EXPECT_EQ(s.phase, Phase::kCheckpointing);
  EXPECT_EQ(s.since, 300);
  EXPECT_EQ(s.from, (Alloc{1, 4, "n1"})) << "where it runs meanwhile";
  retarget_resize(s, {1, 4, "n1"}, {}, Why::kPreempt);
  EXPECT_EQ(s.since, 300) << "the signal's time stays";
  EXPECT_EQ(s.from, (Alloc{1, 4, "n1"}));
  requeue(s, 200, 350);
  EXPECT_EQ(s.phase, Phase::kHeld) << "towards no GPUs";
  EXPECT_TRUE(s.from.empty()) << "its run is over";
  EXPECT_EQ(s.used, 150);
  EXPECT_EQ(s.since, 350);
  JobState c = adopted_state({1, 4, 4}, 100, 90, Why::kNone);
  signal_resize(c, {1, 4, "n1"}, {2, 4, "n1,n2"}, Why::kGrow, 300);
  cancel_resize(c, {1, 4, "n1"}, 320);
  EXPECT_EQ(c.phase, Phase::kRunning);
  EXPECT_TRUE(c.from.empty());
  EXPECT_EQ(c.why, Why::kCancel);
  EXPECT_EQ(c.since, 320);
}

TEST(JobTransitions, AnEndCountsTheLastRunAgainstTheLimit) {
  JobState s = adopted_state({1, 4, 4}, 100, 90, Why::kNone);
  run_at(s, {1, 4, "n1"}, 200);
  s.limit = 10;
  s.used = 60;
  s.run = 200;
  end(s, Why::kTimeout, 500);
  EXPECT_EQ(s.phase, Phase::kEnded);
  EXPECT_TRUE(s.alloc.empty());
  EXPECT_EQ(s.why, Why::kTimeout);
  EXPECT_EQ(s.since, 500);
  EXPECT_EQ(s.used, 360);
  EXPECT_EQ(s.run, 0);
  JobState u = adopted_state({1, 4, 4}, 100, 90, Why::kNone);
  end(u, Why::kCancelled, 0);
  EXPECT_EQ(u.since, 100) << "no end time: since stays";
}

TEST(JobTransitions, ASuspensionKeepsItsGpusAndCallsOffAResize) {
  JobState s = adopted_state({1, 4, 4}, 100, 90, Why::kNone);
  run_at(s, {1, 4, "n1"}, 200);
  signal_resize(s, {1, 4, "n1"}, {2, 4, "n1,n2"}, Why::kGrow, 300);
  suspend(s, {1, 4, "n1"}, 400);
  EXPECT_EQ(s.phase, Phase::kSuspended);
  EXPECT_EQ(s.alloc, (Alloc{1, 4, "n1"}));
  EXPECT_EQ(s.since, 400);
  suspend(s, {1, 4, "n1"}, 450);
  EXPECT_EQ(s.since, 400) << "still suspended: since stays";
  const auto back = parse_comment(format_comment(JobView{}, s));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->phase, Phase::kSuspended);
  EXPECT_EQ(back->alloc, s.alloc);
  EXPECT_FALSE(parse_comment("pollux: gpus=0 nodes=0 | state=suspended range=1-4x4 alloc=0 since=5"))
      << "a suspended job holds GPUs";
  run_at(s, {1, 4, "n1"}, 500);  // resumed
  EXPECT_EQ(s.phase, Phase::kRunning);
  EXPECT_EQ(s.since, 500);
}

}  // namespace
}  // namespace pollux::sched

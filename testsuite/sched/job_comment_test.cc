// The SystemComment: what people see, and the state the plugin reads back.
#include <gtest/gtest.h>

#include "sched/job_comment.h"

namespace pollux::sched {
namespace {

JobState running_state() {
  JobState s;
  s.range = {1, 4, 4};
  s.phase = Phase::kRunning;
  s.alloc = {2, 4, "n1,n2"};
  s.since = 1700000000;
  s.submit = 1699999000;
  s.why = "grow";
  return s;
}

JobView model_view() {
  JobView v;
  v.gpus = 8;
  v.nodes = 2;
  v.has_model = true;
  v.goodput = 1234.4;
  v.efficiency = 0.8123;
  v.speedup = 5.21;
  v.batch = 2048;
  v.micro_steps = 1;
  v.noise_scale = 512;
  return v;
}

TEST(JobComment, ShowsTheSchedulersView) {
  EXPECT_EQ(format_comment(model_view(), running_state()),
            "pollux: gpus=8 nodes=2 goodput=1234/s eff=0.81 speedup=5.21 bsz=2048x1 gns=512 why=grow"
            " | state=run range=1-4x4 alloc=2x4@n1,n2 since=1700000000 submit=1699999000");
}

TEST(JobComment, WithoutAModelSaysSo) {
  JobView v;
  v.gpus = 4;
  v.nodes = 1;
  v.speedup = 4;
  JobState s = running_state();
  s.alloc = {1, 4, "n3"};
  s.why = "start";
  EXPECT_EQ(format_comment(v, s),
            "pollux: gpus=4 nodes=1 model=none speedup=4.00 why=start | state=run range=1-4x4 alloc=1x4@n3 "
            "since=1700000000 submit=1699999000");
}

TEST(JobComment, EveryPhaseRoundTrips) {
  for (Phase ph : {Phase::kHeld, Phase::kStarting, Phase::kRunning, Phase::kCheckpointing, Phase::kEnded}) {
    JobState s = running_state();
    s.phase = ph;
    if (ph == Phase::kHeld || ph == Phase::kEnded) s.alloc = {};
    const auto back = parse_comment(format_comment(model_view(), s));
    ASSERT_TRUE(back) << phase_name(ph);
    EXPECT_EQ(back->phase, ph);
    EXPECT_EQ(back->range, s.range);
    EXPECT_EQ(back->alloc, s.alloc);
    EXPECT_EQ(back->since, s.since);
    EXPECT_EQ(back->submit, s.submit);
    EXPECT_EQ(back->why, s.why);
  }
}

TEST(JobComment, ATimeLimitAndTheRunCountedAgainstItRoundTrip) {
  JobState s = running_state();
  s.limit = 10;
  s.used = 125;
  s.run = 1700000100;
  const std::string text = format_comment(JobView{}, s);
  EXPECT_NE(text.find(" limit=10 used=125 run=1700000100"), std::string::npos) << text;
  const auto back = parse_comment(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->limit, 10);
  EXPECT_EQ(back->used, 125);
  EXPECT_EQ(back->run, 1700000100);
  s.run = 0;  // not running: not shown
  EXPECT_EQ(format_comment(JobView{}, s).find("run="), std::string::npos);
  EXPECT_FALSE(parse_comment(text.substr(0, text.size() - 10) + "run=-5"));
}

TEST(JobComment, ACheckpointTowardsNoGpusRoundTrips) {
  JobState s = running_state();
  s.phase = Phase::kCheckpointing;
  s.alloc = {};
  s.why = "preempt";
  const auto back = parse_comment(format_comment(JobView{}, s));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->alloc.empty());
}

TEST(JobComment, ACheckpointingJobSaysWhereItRuns) {
  JobState s = running_state();
  s.phase = Phase::kCheckpointing;
  s.from = {1, 4, "n3"};  // growing from n3 onto n1,n2
  const std::string text = format_comment(JobView{}, s);
  EXPECT_NE(text.find(" alloc=2x4@n1,n2 from=1x4@n3 since="), std::string::npos) << text;
  const auto back = parse_comment(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->from, s.from);
  EXPECT_EQ(back->alloc, s.alloc);
  // Only a checkpointing job runs elsewhere than its alloc: never shown or
  // read back in another phase; a comment without it (an older version's)
  // still holds.
  s.phase = Phase::kRunning;
  EXPECT_EQ(format_comment(JobView{}, s).find("from="), std::string::npos);
  const auto other = parse_comment("pollux: gpus=1 | state=run range=1-2x1 alloc=1x1@n1 from=1x1@n2 since=5");
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->from.empty());
  const auto old = parse_comment("pollux: gpus=2 why=grow | state=ckpt range=1-2x1 alloc=2x1@n1,n2 since=5");
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->from.empty());
  EXPECT_FALSE(parse_comment("pollux: gpus=2 | state=ckpt range=1-2x1 alloc=2x1@n1,n2 from=1x1 since=5"));
}

TEST(JobComment, IgnoresKeysANewerVersionAdds) {
  const auto s = parse_comment("pollux: gpus=1 why=start | state=start range=1-2x1 alloc=1x1@n1 since=5 epoch=3");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->phase, Phase::kStarting);
}

TEST(JobComment, RejectsAnythingElse) {
  for (const char* bad : {
           "", "a user's comment", "pollux: gpus=1",  // no state part
           "pollux: | range=1-2x1 alloc=0 since=5",  // no state
           "pollux: | state=held alloc=0 since=5",  // no range
           "pollux: | state=held range=1-2x1 since=5",  // no alloc
           "pollux: | state=held range=1-2x1 alloc=0",  // no since
           "pollux: | state=sleep range=1-2x1 alloc=0 since=5",
           "pollux: | state=held range=2-1x1 alloc=0 since=5",
           "pollux: | state=held range=1-2x1 alloc=1x1@n1 since=5",  // held with GPUs
           "pollux: | state=run range=1-2x1 alloc=0 since=5",  // running without
           "pollux: | state=start range=1-2x1 alloc=1x1 since=5", "pollux: | state=start range=1-2x1 alloc=0x1@n1 since=5",
           "pollux: | state=start range=1-2x1 alloc=1x1@ since=5", "pollux: | state=held range=1-2x1 alloc=0 since=-5",
           "pollux: | state=held range=1-2x1 alloc=0 since=5s", "xpollux: | state=held range=1-2x1 alloc=0 since=5",
           "pollux: | state=held range=1-2x1 alloc=0 since=5 submit=x"})
    EXPECT_FALSE(parse_comment(bad)) << bad;
}

}  // namespace
}  // namespace pollux::sched

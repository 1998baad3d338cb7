// The learnt GPU type speeds across slurmctld restarts
// (plugin/io/type_speeds_file.h, TypeSpeedLearner::learnt() and restore()).
#include "io/type_speeds_file.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include "sched/job_model.h"
#include "spool/spool_test_util.h"

namespace pollux::sched {
namespace {

const std::vector<std::string> kTypes = {"", "a100", "h100"};
const GpuTypeSpeeds kSpeeds = {{"h100", 2.5}};

// A learner that has seen jobs 7 (a100 and h100) and 9 (untyped and h100).
TypeSpeedLearner learner_with_two_jobs() {
  TypeSpeedLearner learner;
  learner.ratios(kTypes, kSpeeds);
  const JobModel m = *model_from_hint(pollux::test::full_hint());
  PerfParams fast = m.perf;
  fast.alpha_c /= 3.1;
  fast.beta_c /= 2.9;
  learner.learn(7, {std::nullopt, m.perf, fast}, m.limits);
  learner.learn(9, {m.perf, std::nullopt, fast}, m.limits);
  learner.learn(11, {m.perf, std::nullopt, std::nullopt}, m.limits);  // one type: nothing learnt
  return learner;
}

TEST(TypeSpeedsFile, RoundTripsExactly) {
  TypeSpeedLearner learner = learner_with_two_jobs();
  const LearntTypeSpeeds l = learner.learnt();
  ASSERT_EQ(l.pairs.size(), 2u);
  ASSERT_EQ(l.seen.size(), 2u);
  const std::string text = format_type_speeds(l);
  EXPECT_EQ(text.rfind("pollux_gpu_type_speeds 1\ntype 1\ntype 1 a100\ntype 2.5 h100\npair 0 2 1 ", 0), 0u) << text;
  const ParsedTypeSpeeds back = parse_type_speeds(text, "f");
  EXPECT_EQ(back.error, "");
  EXPECT_EQ(back.learnt, l);

  pollux::test::TempDir dir;
  const std::string path = dir / std::string(kTypeSpeedsName);
  EXPECT_TRUE(read_type_speeds(path).missing);
  EXPECT_EQ(write_type_speeds(path, l), "");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const ParsedTypeSpeeds read = read_type_speeds(path);
  EXPECT_EQ(read.error, "");
  EXPECT_FALSE(read.missing);
  EXPECT_EQ(read.learnt, l);
  EXPECT_NE(write_type_speeds(dir / "no/such/dir", l), "");
}

// A restart: a new learner restored from the file gives the same ratios,
// and does not count a live job's pair twice.
TEST(TypeSpeedsFile, ARestoredLearnerGivesTheSameRatios) {
  TypeSpeedLearner before = learner_with_two_jobs();
  EXPECT_TRUE(before.take_changed());
  EXPECT_FALSE(before.take_changed());
  const TypeRatios& r0 = before.ratios(kTypes, kSpeeds);
  TypeSpeedLearner after;
  after.restore(parse_type_speeds(format_type_speeds(before.learnt()), "f").learnt);
  EXPECT_EQ(after.take_restored(), std::nullopt);
  const TypeRatios& r1 = after.ratios(kTypes, kSpeeds);
  EXPECT_EQ(after.take_restored(), true);
  EXPECT_EQ(after.take_restored(), std::nullopt);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      EXPECT_EQ(r1.grad_time_ratio(a, b), r0.grad_time_ratio(a, b)) << a << " " << b;
      EXPECT_EQ(r1.observations(a, b), r0.observations(a, b));
    }
  EXPECT_EQ(after.learnt(), before.learnt());
  const JobModel m = *model_from_hint(pollux::test::full_hint());
  after.learn(7, {std::nullopt, m.perf, m.perf}, m.limits);  // already seen before the restart
  EXPECT_EQ(r1.observations(1, 2), 1);
  // Jobs that ended leave the file; their observations stay.
  after.take_changed();
  after.forget_others({9});
  EXPECT_TRUE(after.take_changed());
  EXPECT_EQ(after.learnt().seen.size(), 1u);
  EXPECT_EQ(after.learnt().pairs, before.learnt().pairs);
}

// Another seed than it was learnt under: taken up whole (an observation is
// a ratio between two named types, not of the seed). Other types: the
// pairs of types still present taken up at their new indices, the rest
// dropped; none left: started over, as without the restart.
TEST(TypeSpeedsFile, AStateIsTakenUpByTypeNameWhateverTheSeed) {
  const LearntTypeSpeeds l = learner_with_two_jobs().learnt();
  const JobModel m = *model_from_hint(pollux::test::full_hint());
  {
    TypeSpeedLearner after;
    after.restore(l);
    const TypeRatios& r = after.ratios(kTypes, GpuTypeSpeeds{{"h100", 2}});
    EXPECT_EQ(after.take_restored(), true);
    EXPECT_EQ(r.observations(1, 2), 1);
    EXPECT_EQ(r.observations(0, 2), 1);
    EXPECT_EQ(r.log_ratio_sum(1, 2), l.pairs[1].log_sum);
    EXPECT_EQ(after.learnt().seen, l.seen);
    EXPECT_EQ(after.learnt().seed, (std::vector<double>{1, 1, 2}));
    after.learn(7, {std::nullopt, m.perf, m.perf}, m.limits);  // already seen
    EXPECT_EQ(r.observations(1, 2), 1);
  }
  {
    TypeSpeedLearner after;
    after.restore(l);
    const TypeRatios& r = after.ratios({"a100", "h100"}, kSpeeds);
    EXPECT_EQ(after.take_restored(), true);
    EXPECT_EQ(r.observations(0, 1), 1);  // job 7's; job 9's was with untyped GPUs
    EXPECT_EQ(after.learnt().seen, (std::vector<LearntTypeSpeeds::Seen>{{7, 0, 1}}));
  }
  {
    TypeSpeedLearner after;
    after.restore(l);
    const TypeRatios& r = after.ratios({"a100", "b200"}, kSpeeds);
    EXPECT_EQ(after.take_restored(), false);
    EXPECT_EQ(r.observations(0, 1), 0);
    EXPECT_TRUE(after.learnt().seen.empty());
    EXPECT_TRUE(after.take_changed());  // the fresh state replaces the file
  }
}

TEST(TypeSpeedsFile, RefusesAnythingElseWithOneLineNamingFileAndLine) {
  const std::string good = format_type_speeds(learner_with_two_jobs().learnt());
  const std::string head = "pollux_gpu_type_speeds 1\ntype 1 a100\ntype 2 h100\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", ":1: empty"},
      {"pollux_gpu_type_speeds 2\n", ":1: expected the header"},
      {good.substr(0, good.size() - 1), "cut"},
      {"pollux_gpu_type_speeds 1\ntype 1 a100\n", ":2: fewer than 2 types"},
      {head + "type 1 a100\n", ":4: type names must be sorted"},
      {"pollux_gpu_type_speeds 1\ntype 1 h100\ntype 1 a100\n", ":3: type names must be sorted"},
      {"pollux_gpu_type_speeds 1\ntype 0 a100\n", ":2: a type's speed"},
      {"pollux_gpu_type_speeds 1\ntype nan a100\n", ":2: a type's speed"},
      {"pollux_gpu_type_speeds 1\ntype 1 a100 x\n", ":2: expected 'type"},
      {"pollux_gpu_type_speeds 1\ntype 1 \xff\n", ":2: a type name must be printable"},
      {"pollux_gpu_type_speeds 1\ntype 1 a100\npair 0 1 1 0\n", ":3: fewer than 2 types"},
      {head + "pair 1 0 1 0\n", ":4: a pair must be two"},
      {head + "pair 0 2 1 0\n", ":4: a pair must be two"},
      {head + "pair 0 1 0 0\n", ":4: a pair's count"},
      {head + "pair 0 1 01 0\n", ":4: a pair's count"},
      {head + "pair 0 1 -1 0\n", ":4: a pair's count"},
      {head + "pair 0 1 1 inf\n", ":4: a pair's log sum"},
      {head + "pair 0 1 1 51\n", ":4: a pair's log sum"},
      {head + "pair 0 1 1 0\npair 0 1 1 0\n", ":5: pairs must be sorted"},
      {head + "pair 0 1  1 0\n", ":4: expected 'pair"},
      {head + "seen 0 0 1\n", ":4: a job id"},
      {head + "seen 4294967296 0 1\n", ":4: a job id"},
      {head + "seen 5 0 1\nseen 5 0 1\n", ":5: seen jobs must be sorted"},
      {head + "seen 5 0 1\npair 0 1 1 0\n", ":5: a pair after"},
      {head + "pair 0 1 1 0\ntype 3 l40s\n", ":5: a type after"},
      {head + "\n", ":4: expected a type, pair or seen"},
      {head + "seen 5 0 1\r\n", ":4: a seen pair"},
  };
  for (const auto& [text, why] : bad) {
    const ParsedTypeSpeeds r = parse_type_speeds(text, "/state/pollux_gpu_type_speeds");
    EXPECT_EQ(r.error.rfind("/state/pollux_gpu_type_speeds:", 0), 0u) << r.error;
    EXPECT_NE(r.error.find(why), std::string::npos) << r.error;
    EXPECT_EQ(r.error.find('\n'), std::string::npos);
    EXPECT_TRUE(r.learnt.types.empty());
  }
  EXPECT_EQ(parse_type_speeds(head + "pair 0 1 2 -1.5\nseen 5 0 1\nseen 6 0 1\n", "f").error, "");
}

}  // namespace
}  // namespace pollux::sched

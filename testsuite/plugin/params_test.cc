// SchedulerParameters parsing: defaults, every option, every rejection.
#include <gtest/gtest.h>

#include "core/params.h"

namespace pollux::sched {
namespace {

TEST(Params, DefaultsWhenNothingIsSet) {
  const ParamsResult r = parse_params("");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.params, Params{});
  EXPECT_EQ(r.params.interval, 60);
  EXPECT_EQ(r.params.fairness_p, -1);
  EXPECT_EQ(r.params.restart_penalty, 30);
  EXPECT_TRUE(r.params.interference_avoidance);
  EXPECT_EQ(r.params.max_nodes_per_job, 16);
  EXPECT_EQ(r.params.spool_dir, "/var/spool/slurm/pollux");
  EXPECT_EQ(r.params.checkpoint_timeout, 120);
  EXPECT_EQ(r.params.search_budget, 0);
  EXPECT_TRUE(r.params.backfill);
}

TEST(Params, IgnoresSlurmsOwnOptions) {
  const ParamsResult r = parse_params("batch_sched_delay=0,bf_interval=30,bf_continue,sched_interval=1");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.params, Params{});
}

TEST(Params, ReadsEveryOption) {
  const ParamsResult r = parse_params(
      "bf_interval=1,pollux_interval=5,pollux_fairness=-0.5,pollux_restart_penalty=10,"
      "pollux_interference_avoidance=no,pollux_max_nodes=4,pollux_spool_dir=/tmp/spool,"
      "pollux_checkpoint_timeout=30.5,pollux_search_budget=5000,pollux_backfill=no");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(r.params.interval, 5);
  EXPECT_EQ(r.params.fairness_p, -0.5);
  EXPECT_EQ(r.params.restart_penalty, 10);
  EXPECT_FALSE(r.params.interference_avoidance);
  EXPECT_EQ(r.params.max_nodes_per_job, 4);
  EXPECT_EQ(r.params.spool_dir, "/tmp/spool");
  EXPECT_EQ(r.params.checkpoint_timeout, 30.5);
  EXPECT_EQ(r.params.search_budget, 5000);
  EXPECT_FALSE(r.params.backfill);
}

TEST(Params, KeysAreCaseInsensitiveAndTheLastOneWins) {
  const ParamsResult r = parse_params("POLLUX_Interval=5, pollux_interval=7 ,Pollux_Backfill=Off");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.params.interval, 7);
  EXPECT_FALSE(r.params.backfill);
}

TEST(Params, ARepeatedKeyIsNotedWithTheOneThatWins) {
  const ParamsResult r = parse_params("pollux_interval=5,pollux_interval=7");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("pollux_interval given 2 times: the last valid one wins: pollux_interval=7"),
            std::string::npos)
      << r.notes[0];
  EXPECT_TRUE(parse_params("pollux_interval=5,pollux_fairness=-2").notes.empty());
}

TEST(Params, ARefusedRepeatKeepsTheEarlierValueAndSaysSo) {
  const ParamsResult r = parse_params("pollux_interval=5,pollux_interval=abc");
  EXPECT_EQ(r.params.interval, 5);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("pollux_interval=5 (given earlier) kept"), std::string::npos) << r.errors[0];
  EXPECT_EQ(r.errors[0].find("default kept"), std::string::npos) << r.errors[0];
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("wins: pollux_interval=5"), std::string::npos) << r.notes[0];
  const ParamsResult none = parse_params("pollux_interval=x,pollux_interval");
  EXPECT_EQ(none.params.interval, Params{}.interval);
  ASSERT_EQ(none.errors.size(), 2u);
  EXPECT_NE(none.errors[1].find("default kept"), std::string::npos) << none.errors[1];
}

TEST(Params, BooleansAcceptTheUsualSpellings) {
  for (const char* yes : {"yes", "YES", "true", "on", "1"})
    EXPECT_TRUE(parse_params(std::string("pollux_backfill=no,pollux_backfill=") + yes).params.backfill) << yes;
  for (const char* no : {"no", "False", "off", "0"})
    EXPECT_FALSE(parse_params(std::string("pollux_backfill=") + no).params.backfill) << no;
}

TEST(Params, FairnessZeroIsTheGeometricMean) {
  const ParamsResult r = parse_params("pollux_fairness=0");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.params.fairness_p, 0);
}

struct Rejection {
  const char* text;
  const char* option;  // named in the message
};

class ParamsRejection : public ::testing::TestWithParam<Rejection> {};

TEST_P(ParamsRejection, KeepsTheDefaultAndSaysWhy) {
  const ParamsResult r = parse_params(std::string("bf_interval=30,") + GetParam().text);
  ASSERT_EQ(r.errors.size(), 1u) << GetParam().text;
  EXPECT_NE(r.errors[0].find(GetParam().option), std::string::npos) << r.errors[0];
  EXPECT_EQ(r.params, Params{}) << GetParam().text << ": " << describe(r.params);
}

INSTANTIATE_TEST_SUITE_P(
    EveryRejectionPath, ParamsRejection,
    ::testing::Values(
        Rejection{"pollux_interval=abc", "pollux_interval"}, Rejection{"pollux_interval=5s", "pollux_interval"},
        Rejection{"pollux_interval=", "pollux_interval"}, Rejection{"pollux_interval= 5", "pollux_interval"},
        Rejection{"pollux_interval=0.5", "pollux_interval"}, Rejection{"pollux_interval=86401", "pollux_interval"},
        Rejection{"pollux_interval=nan", "pollux_interval"}, Rejection{"pollux_interval=inf", "pollux_interval"},
        Rejection{"pollux_interval=1e999", "pollux_interval"}, Rejection{"pollux_interval", "pollux_interval"},
        Rejection{"pollux_fairness=-11", "pollux_fairness"}, Rejection{"pollux_fairness=1.5", "pollux_fairness"},
        Rejection{"pollux_restart_penalty=-1", "pollux_restart_penalty"},
        Rejection{"pollux_restart_penalty=1e6", "pollux_restart_penalty"},
        Rejection{"pollux_interference_avoidance=maybe", "pollux_interference_avoidance"},
        Rejection{"pollux_interference_avoidance=", "pollux_interference_avoidance"},
        Rejection{"pollux_max_nodes=0", "pollux_max_nodes"}, Rejection{"pollux_max_nodes=2.5", "pollux_max_nodes"},
        Rejection{"pollux_max_nodes=100001", "pollux_max_nodes"}, Rejection{"pollux_max_nodes=-3", "pollux_max_nodes"},
        Rejection{"pollux_spool_dir=relative/path", "pollux_spool_dir"}, Rejection{"pollux_spool_dir=", "pollux_spool_dir"},
        Rejection{"pollux_spool_dir=/", "pollux_spool_dir"}, Rejection{"pollux_spool_dir=/a/../etc", "pollux_spool_dir"},
        Rejection{"pollux_spool_dir=/a/..", "pollux_spool_dir"}, Rejection{"pollux_spool_dir=/a\tb", "pollux_spool_dir"},
        Rejection{"pollux_metrics_file=metrics.prom", "pollux_metrics_file"},
        Rejection{"pollux_metrics_file=/a/../b.prom", "pollux_metrics_file"},
        Rejection{"pollux_checkpoint_timeout=0", "pollux_checkpoint_timeout"},
        Rejection{"pollux_checkpoint_timeout=-5", "pollux_checkpoint_timeout"},
        Rejection{"pollux_checkpoint_timeout=x", "pollux_checkpoint_timeout"},
        Rejection{"pollux_search_budget=-1", "pollux_search_budget"},
        Rejection{"pollux_search_budget=1.5", "pollux_search_budget"},
        Rejection{"pollux_search_budget=2000000000", "pollux_search_budget"},
        Rejection{"pollux_backfill=2", "pollux_backfill"}, Rejection{"pollux_intervall=5", "unknown option"},
        Rejection{"pollux_=1", "unknown option"}));

TEST(Params, TheMetricsFileIsOffByDefaultAndSetByItsOption) {
  EXPECT_EQ(parse_params("").params.metrics_file, "");
  const ParamsResult r = parse_params("pollux_metrics_file=/var/lib/prometheus/node-exporter/pollux.prom");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.params.metrics_file, "/var/lib/prometheus/node-exporter/pollux.prom");
  EXPECT_NE(r.params, Params{});
  EXPECT_NE(describe(r.params).find("pollux_metrics_file=/var/lib/prometheus/node-exporter/pollux.prom"),
            std::string::npos);
}

TEST(Params, ALongSpoolPathIsRejected) {
  const ParamsResult r = parse_params("pollux_spool_dir=/" + std::string(1100, 'a'));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.params.spool_dir, Params{}.spool_dir);
}

TEST(Params, AnInvalidValueDoesNotHideTheValidOnes) {
  const ParamsResult r = parse_params("pollux_interval=-1,pollux_fairness=-2,pollux_max_nodes=x");
  EXPECT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.params.interval, 60);
  EXPECT_EQ(r.params.fairness_p, -2);
  EXPECT_EQ(r.params.max_nodes_per_job, 16);
}

TEST(Params, DescribeNamesEveryOption) {
  const std::string d = describe(Params{});
  for (const char* key : {"pollux_interval=60", "pollux_fairness=-1", "pollux_restart_penalty=30",
                          "pollux_interference_avoidance=yes", "pollux_max_nodes=16",
                          "pollux_spool_dir=/var/spool/slurm/pollux", "pollux_checkpoint_timeout=120",
                          "pollux_search_budget=0", "pollux_backfill=yes"})
    EXPECT_NE(d.find(key), std::string::npos) << key << " not in " << d;
}

TEST(Params, PolicyOptionsFollowTheParametersWithUniformGpusPerNode) {
  Params p;
  p.fairness_p = -3;
  p.restart_penalty = 12;
  p.interval = 20;
  p.interference_avoidance = false;
  p.max_nodes_per_job = 3;
  p.search_budget = 777;
  const PolicyOptions o = policy_options(p);
  EXPECT_EQ(o.fairness_p, -3);
  EXPECT_EQ(o.restart_delay, 12);
  EXPECT_EQ(o.interval, 20);
  EXPECT_FALSE(o.interference_avoidance);
  EXPECT_EQ(o.max_nodes_per_job, 3);
  EXPECT_EQ(o.search_budget, 777);
  EXPECT_TRUE(o.uniform_gpus_per_node);
}

}  // namespace
}  // namespace pollux::sched

// SchedulerParameters parsing: defaults, every option, every rejection.
#include <gtest/gtest.h>

#include <csignal>
#include <iterator>
#include <utility>

#include "sched/params.h"

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

TEST(Params, AutoscaleIsOffByDefaultAndItsBandIsAdaptDLs) {
  EXPECT_EQ(Params{}.autoscale, AutoscaleMode::kOff);
  EXPECT_EQ(Params{}.utility_band, (UtilityBand{0.35, 0.65}));
  const ParamsResult r = parse_params("pollux_autoscale=Goodput,pollux_utility_band=0.2:0.8");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.params.autoscale, AutoscaleMode::kGoodput);
  EXPECT_EQ(r.params.utility_band, (UtilityBand{0.2, 0.8}));
  for (const char* bad : {"0.5:0.5", "-0.1:0.5", "0.2:1.5", "0.2", "a:b", "0.2:0.3:0.4"}) {
    const ParamsResult b = parse_params(std::string("pollux_utility_band=") + bad);
    ASSERT_EQ(b.errors.size(), 1u) << bad;
    EXPECT_EQ(b.params.utility_band, (UtilityBand{0.35, 0.65})) << bad;
  }
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
        Rejection{"pollux_resize_signals=KILL", "pollux_resize_signals"},
        Rejection{"pollux_resize_signals=USR1:", "pollux_resize_signals"},
        Rejection{"pollux_resize_signals=", "pollux_resize_signals"},
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

// The signals an agent may announce for its resize requests: names or
// numbers, ':'-separated (',' separates SchedulerParameters).
TEST(Params, ResizeSignalsByNameOrNumber) {
  const ParamsResult r = parse_params("pollux_resize_signals=USR2:SIGURG:40");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(r.params.resize_signals, (1ULL << (SIGUSR2 - 1)) | (1ULL << (SIGURG - 1)) | (1ULL << 39));
  EXPECT_NE(describe(r.params).find("pollux_resize_signals=USR2:URG:40"), std::string::npos) << describe(r.params);
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
                          "pollux_search_budget=0", "pollux_backfill=yes", "pollux_resize_signals=USR1:USR2"})
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
  EXPECT_FALSE(o.interference_avoidance);
  EXPECT_EQ(o.max_nodes_per_job, 3);
  EXPECT_EQ(o.search_budget, 777);
  EXPECT_TRUE(o.uniform_gpus_per_node);
}


// The table (params.h: parameter_table()) is the one place a parameter is
// described: each row's default is what Params{} holds, and each row alone
// decides whether two parameter sets differ in it.
namespace table {

// A valid value other than the default, per row: a new row needs one here.
const char* other_value(const std::string& name) {
  static const std::pair<const char*, const char*> values[] = {
      {"pollux_interval", "5"},          {"pollux_fairness", "0.5"},
      {"pollux_restart_penalty", "7"},   {"pollux_interference_avoidance", "no"},
      {"pollux_max_nodes", "3"},         {"pollux_spool_dir", "/tmp/elsewhere"},
      {"pollux_checkpoint_timeout", "9"}, {"pollux_search_budget", "100"},
      {"pollux_backfill", "no"},         {"pollux_resize_signals", "URG"},
      {"pollux_metrics_file", "/tmp/pollux.prom"}, {"pollux_gpu_type_speeds", "h100=2.5"},
      {"pollux_autoscale", "goodput"},   {"pollux_utility_band", "0.4:0.9"}};
  for (const auto& [key, value] : values)
    if (name == key) return value;
  return nullptr;
}

TEST(ParameterTable, EveryRowParsesItsDefaultToWhatParamsHolds) {
  for (const ParameterRow& row : parameter_table()) {
    Params p;
    if (row.default_text == nullptr) {
      EXPECT_EQ(row.format(p), "") << row.name << " has no default, so it is unset";
      continue;
    }
    EXPECT_EQ(row.parse(row.default_text, p), "") << row.name;
    EXPECT_TRUE(row.same(p, Params{})) << row.name;
    EXPECT_EQ(row.format(p), row.default_text) << row.name;
    const ParamsResult r = parse_params(std::string(row.name) + "=" + row.default_text);
    EXPECT_TRUE(r.errors.empty()) << row.name;
    EXPECT_EQ(r.params, Params{}) << row.name;
  }
}

TEST(ParameterTable, ComparisonsDetectEveryField) {
  for (const ParameterRow& row : parameter_table()) {
    const char* value = other_value(row.name);
    ASSERT_NE(value, nullptr) << row.name << ": give the new row a value in this test";
    const ParamsResult r = parse_params(std::string(row.name) + "=" + value);
    ASSERT_TRUE(r.errors.empty()) << r.errors.front();
    EXPECT_FALSE(row.same(r.params, Params{})) << row.name;
    EXPECT_NE(r.params, Params{}) << row.name;
    EXPECT_EQ(policy_changed(r.params, Params{}), row.policy) << row.name;
    EXPECT_NE(describe(r.params).find(std::string(row.name) + "=" + row.format(r.params)), std::string::npos)
        << describe(r.params);
    for (const ParameterRow& other : parameter_table()) {
      if (&other == &row) continue;
      EXPECT_TRUE(other.same(r.params, Params{})) << row.name << " changed " << other.name;
    }
  }
}

TEST(ParameterTable, ThePolicyRowsAreThePolicysOptions) {
  for (const ParameterRow& row : parameter_table()) {
    const ParamsResult r = parse_params(std::string(row.name) + "=" + other_value(row.name));
    const PolicyOptions a = policy_options(r.params), b = policy_options(Params{});
    const bool options_differ = a.fairness_p != b.fairness_p || a.interference_avoidance != b.interference_avoidance ||
                                a.max_nodes_per_job != b.max_nodes_per_job || a.search_budget != b.search_budget;
    EXPECT_EQ(row.policy, options_differ) << row.name;
  }
}

TEST(ParameterTable, OutOfRangeValuesAreRejectedWithTheRangeAndTheDefaultKept) {
  const std::pair<const char*, const char*> cases[] = {
      {"pollux_interval=0.5", "pollux_interval=0.5 must be a number in [1, 86400]: default kept"},
      {"pollux_fairness=2", "pollux_fairness=2 must be a number in [-10, 1]: default kept"},
      {"pollux_restart_penalty=-1", "pollux_restart_penalty=-1 must be a number in [0, 86400]: default kept"},
      {"pollux_interference_avoidance=2", "pollux_interference_avoidance=2 must be yes or no: default kept"},
      {"pollux_max_nodes=0", "pollux_max_nodes=0 must be an integer in [1, 100000]: default kept"},
      {"pollux_spool_dir=spool", "pollux_spool_dir=spool must be an absolute path: default kept"},
      {"pollux_checkpoint_timeout=0", "pollux_checkpoint_timeout=0 must be a number in [1, 86400]: default kept"},
      {"pollux_search_budget=-1", "pollux_search_budget=-1 must be an integer in [0, 1e+09]: default kept"},
      {"pollux_backfill=maybe", "pollux_backfill=maybe must be yes or no: default kept"},
      {"pollux_resize_signals=0",
       "pollux_resize_signals=0 must be signal names or numbers (1-64, not KILL or STOP) separated by ':': default "
       "kept"},
      {"pollux_metrics_file=m.prom", "pollux_metrics_file=m.prom must be an absolute path: default kept"},
      {"pollux_gpu_type_speeds=h100=0",
       "pollux_gpu_type_speeds=h100=0 must be TYPE=SPEED pairs separated by ':' (speeds in [0.001, 1000]): default kept"},
      {"pollux_autoscale=yes", "pollux_autoscale=yes must be off or goodput: default kept"},
      {"pollux_utility_band=0.6:0.5", "pollux_utility_band=0.6:0.5 must be MIN:MAX with 0 <= MIN < MAX <= 1: default kept"}};
  ASSERT_EQ(std::size(cases), parameter_table().size()) << "one case per row";
  for (const auto& [text, message] : cases) {
    const ParamsResult r = parse_params(text);
    ASSERT_EQ(r.errors.size(), 1u) << text;
    EXPECT_EQ(r.errors[0], message);
    EXPECT_EQ(r.params, Params{}) << text;
  }
}

}  // namespace table
}  // namespace
}  // namespace pollux::sched

// Which jobs are elastic (the same rules at submission and in the scheduler).
#include <gtest/gtest.h>

#include "sched/elastic.h"

namespace pollux::sched {
namespace {

JobShape elastic_shape() {
  JobShape s;
  s.batch = true;
  s.requeue = true;
  s.min_nodes = 1;
  s.max_nodes = 4;
  s.tres_per_node = "gres:gpu:4";
  return s;
}

TEST(Elastic, TheDocumentedFormIsElastic) {
  std::string why = "unchanged";
  const auto r = classify(elastic_shape(), &why);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (ElasticRange{1, 4, 4}));
  EXPECT_EQ(why, "unchanged");
  EXPECT_EQ(r->min_gpus(), 1);
  EXPECT_EQ(r->max_gpus(), 16);
}

// Slurm 24.11's sbatch writes --cpus-per-task=N into tres_per_task as
// "cpu=N": CPUs per task keep a job elastic, GPUs per task do not.
TEST(Elastic, CpusPerTaskKeepAJobElasticGpusPerTaskDoNot) {
  JobShape s = elastic_shape();
  s.tres_per_task = "cpu=2";
  EXPECT_TRUE(classify(s));
  for (const char* tres : {"cpu=2,gres/gpu:1", "gres/gpu:1", "gres:gpu:1"}) {
    s.tres_per_task = tres;
    std::string why;
    EXPECT_FALSE(classify(s, &why)) << tres;
    EXPECT_NE(why.find("per job, socket or task"), std::string::npos) << tres;
  }
  EXPECT_FALSE(asks_beyond_cpus(""));
  EXPECT_FALSE(asks_beyond_cpus("cpu=4"));
  EXPECT_TRUE(asks_beyond_cpus("cpu=4,gres/gpu=1"));
}

TEST(Elastic, GresSpellingsOfGpusPerNode) {
  for (const char* tres : {"gres:gpu:2", "gres/gpu:2", "gpu:2"}) {
    JobShape s = elastic_shape();
    s.tres_per_node = tres;
    const auto r = classify(s);
    ASSERT_TRUE(r) << tres;
    EXPECT_EQ(r->gpus_per_node, 2) << tres;
  }
}

struct RigidCase {
  const char* name;
  void (*change)(JobShape&);
  const char* why;
};

class Rigid : public ::testing::TestWithParam<RigidCase> {};

TEST_P(Rigid, EveryOtherJobIsRigidAndSaysWhy) {
  JobShape s = elastic_shape();
  GetParam().change(s);
  std::string why;
  EXPECT_FALSE(classify(s, &why)) << GetParam().name;
  EXPECT_NE(why.find(GetParam().why), std::string::npos) << GetParam().name << ": " << why;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, Rigid,
    ::testing::Values(
        RigidCase{"interactive", [](JobShape& s) { s.batch = false; }, "batch"},
        RigidCase{"no requeue", [](JobShape& s) { s.requeue = false; }, "requeue"},
        RigidCase{"array", [](JobShape& s) { s.array = true; }, "array"},
        RigidCase{"het", [](JobShape& s) { s.heterogeneous = true; }, "heterogeneous"},
        RigidCase{"fixed nodes", [](JobShape& s) { s.max_nodes = 1; }, "node range"},
        RigidCase{"reversed", [](JobShape& s) { s.min_nodes = 3; s.max_nodes = 2; }, "node range"},
        RigidCase{"no -N", [](JobShape& s) { s.min_nodes = 0; }, "node range"},
        RigidCase{"NO_VAL max", [](JobShape& s) { s.max_nodes = 0xfffffffe; }, "node range"},
        RigidCase{"--gpus", [](JobShape& s) { s.tres_per_job = "gres:gpu:8"; }, "per job"},
        RigidCase{"--gpus-per-task", [](JobShape& s) { s.tres_per_task = "gres:gpu:1"; }, "per job"},
        RigidCase{"--gpus-per-socket", [](JobShape& s) { s.tres_per_socket = "gres:gpu:1"; }, "per job"},
        RigidCase{"no GPUs", [](JobShape& s) { s.tres_per_node.clear(); }, "gpus-per-node"},
        RigidCase{"typed", [](JobShape& s) { s.tres_per_node = "gres:gpu:a100:4"; }, "gpus-per-node"},
        RigidCase{"other gres too", [](JobShape& s) { s.tres_per_node = "gres:gpu:4,gres:nic:1"; }, "gpus-per-node"},
        RigidCase{"zero GPUs", [](JobShape& s) { s.tres_per_node = "gres:gpu:0"; }, "gpus-per-node"},
        RigidCase{"not gpu", [](JobShape& s) { s.tres_per_node = "gres:mps:100"; }, "gpus-per-node"},
        RigidCase{"--nodelist", [](JobShape& s) { s.node_list = true; }, "--nodelist"},
        RigidCase{"--exclusive", [](JobShape& s) { s.exclusive = true; }, "--exclusive"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& c : n) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

TEST(Elastic, RangeTextRoundTrips) {
  const ElasticRange r{2, 8, 4};
  EXPECT_EQ(format_range(r), "2-8x4");
  EXPECT_EQ(parse_range("2-8x4"), r);
  for (const char* bad : {"", "2-8", "2x4", "8-2x4", "0-2x4", "1-2x0", "a-2x4", "1-2x4x", "1--2x4", "1-2x2000"})
    EXPECT_FALSE(parse_range(bad)) << bad;
}

TEST(Elastic, AllowedSizes) {
  const ElasticRange r{2, 3, 4};
  EXPECT_TRUE(r.allows(2, 1));
  EXPECT_TRUE(r.allows(3, 4));
  EXPECT_FALSE(r.allows(1, 4));
  EXPECT_FALSE(r.allows(4, 1));
  EXPECT_FALSE(r.allows(2, 5));
  EXPECT_FALSE(r.allows(2, 0));
}

}  // namespace
}  // namespace pollux::sched

namespace pollux::sched {
namespace {

TEST(Elastic, AnAdministratorsSizeUpdateBecomesTheRange) {
  const ElasticRange now{1, 4, 4};
  EXPECT_EQ(updated_range(now, 2, 3, ""), (ElasticRange{2, 3, 4}));
  EXPECT_EQ(updated_range(now, 3, 3, ""), (ElasticRange{3, 3, 4}));   // NumNodes=3: fixed at 3 nodes
  EXPECT_EQ(updated_range(now, 6, 0, ""), (ElasticRange{6, 6, 4}));   // a MIN above MAX raises MAX
  EXPECT_EQ(updated_range(now, 0, 2, "gres:gpu:2"), (ElasticRange{1, 2, 2}));
  EXPECT_EQ(updated_range(now, 0, 0, ""), now);
  std::string why;
  EXPECT_FALSE(updated_range(now, 3, 2, "", &why));
  EXPECT_NE(why.find("reversed"), std::string::npos);
  EXPECT_FALSE(updated_range(now, 0, 0, "gres:gpu:a100:2", &why));
  EXPECT_NE(why.find("untyped"), std::string::npos);
}

}  // namespace
}  // namespace pollux::sched

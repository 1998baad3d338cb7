// check_allocation, make_policy, the policy table and input validation.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

#include "pollux/interference.h"
#include "pollux/policies.h"
#include "pollux/policy.h"
#include "test_policy_apps.h"

namespace pollux {
namespace {

JobInfo job(std::uint64_t id, int max_replicas = 8, int min_replicas = 0) {
  JobInfo j;
  j.id = id;
  j.max_replicas = max_replicas;
  j.min_replicas = min_replicas;
  j.age = 1000;
  return j;
}

const std::vector<NodeInfo> kNodes{{4}, {4}, {2}};

std::string violation(const std::vector<JobInfo>& jobs, const std::vector<Placement>& alloc,
                      const PolicyOptions& o = {}) {
  return check_allocation(jobs, kNodes, alloc, o).value_or("");
}

TEST(CheckAllocation, AcceptsAValidAllocation) {
  const std::vector<JobInfo> jobs{job(1), job(2), job(3)};
  EXPECT_EQ(violation(jobs, {{{0, 4}}, {{1, 2}, {2, 2}}, {}}), "");
  EXPECT_EQ(violation({}, {}), "");
}

TEST(CheckAllocation, NamesEachViolation) {
  const std::vector<JobInfo> jobs{job(1, 4, 2), job(2)};
  EXPECT_NE(violation(jobs, {{}}).find("1 entries for 2 jobs"), std::string::npos);
  EXPECT_NE(violation(jobs, {{{0, 5}}, {}}).find("max_replicas"), std::string::npos);
  EXPECT_NE(violation(jobs, {{{0, 1}}, {}}).find("below min_replicas"), std::string::npos);
  EXPECT_NE(violation(jobs, {{}, {{0, 3}, {0, 1}}}).find("not normalized"), std::string::npos);
  EXPECT_NE(violation(jobs, {{}, {{1, 1}, {0, 1}}}).find("not normalized"), std::string::npos);
  EXPECT_NE(violation(jobs, {{}, {{0, 0}}}).find("not normalized"), std::string::npos);
  EXPECT_NE(violation(jobs, {{}, {{3, 1}}}).find("outside"), std::string::npos);
  EXPECT_NE(violation(jobs, {{}, {{-1, 1}}}).find("outside"), std::string::npos);
  EXPECT_NE(violation(jobs, {{{0, 3}}, {{0, 2}}}).find("node 0: 5 GPUs allocated, capacity 4"), std::string::npos);
}

TEST(CheckAllocation, MaxNodesPerJob) {
  const std::vector<JobInfo> jobs{job(1)};
  PolicyOptions o;
  o.max_nodes_per_job = 2;
  EXPECT_EQ(violation(jobs, {{{0, 1}, {1, 1}}}, o), "");
  EXPECT_NE(violation(jobs, {{{0, 1}, {1, 1}, {2, 1}}}, o).find("max_nodes_per_job 2"), std::string::npos);
}

TEST(CheckAllocation, InterferenceAvoidanceOnlyWhenEnabled) {
  const std::vector<JobInfo> jobs{job(1), job(2), job(3)};
  // Two distributed jobs share node 1; a single-node job may share with one.
  const std::vector<Placement> alloc{{{0, 2}, {1, 2}}, {{1, 1}, {2, 1}}, {{0, 2}}};
  PolicyOptions o;
  o.interference_avoidance = true;
  EXPECT_NE(violation(jobs, alloc, o).find("node 1 hosts two distributed jobs"), std::string::npos);
  o.interference_avoidance = false;
  EXPECT_EQ(violation(jobs, alloc, o), "");
  o.interference_avoidance = true;
  EXPECT_EQ(violation(jobs, {{{0, 2}, {1, 2}}, {{1, 1}}, {{0, 2}}}, o), "");
}

// An arrivals round's answer beside jobs it did not size (sched/pollux's
// round and pollux-sim's): a multi-node placement on a node of a
// distributed job is dropped; one-node placements and nodes of one-node
// jobs are fine.
TEST(KeepDistributedApart, DropsOnlyMultiNodePlacementsOnADistributedJobsNodes) {
  const std::vector<Placement> others{{{0, 2}, {1, 2}}, {{2, 1}}, {}};
  std::vector<Placement> out{{{1, 2}, {3, 2}}, {{1, 2}}, {{2, 1}, {3, 1}}, {{3, 2}, {4, 2}}, {}};
  keep_distributed_apart(others, out);
  EXPECT_TRUE(out[0].empty());                          // beside the job on nodes 0-1
  EXPECT_EQ(out[1], (Placement{{1, 2}}));               // one node: no interference
  EXPECT_EQ(out[2], (Placement{{2, 1}, {3, 1}}));       // node 2's job is on one node
  EXPECT_EQ(out[3], (Placement{{3, 2}, {4, 2}}));       // other nodes
  EXPECT_TRUE(out[4].empty());
}

TEST(CheckAllocation, UniformGpusPerNodeOnlyWhenEnabled) {
  const std::vector<JobInfo> jobs{job(1)};
  PolicyOptions o;
  o.uniform_gpus_per_node = true;
  EXPECT_NE(violation(jobs, {{{0, 3}, {1, 2}}}, o).find("uniform_gpus_per_node"), std::string::npos);
  EXPECT_EQ(violation(jobs, {{{0, 2}, {1, 2}}}, o), "");
  o.uniform_gpus_per_node = false;
  EXPECT_EQ(violation(jobs, {{{0, 3}, {1, 2}}}, o), "");
}

TEST(MakePolicy, KnowsItsNamesAndRejectsOthers) {
  for (const PolicyEntry* e : testing::one_type_policies()) {
    const auto p = make_policy(e->name, {});
    ASSERT_NE(p, nullptr) << e->name;
    EXPECT_EQ(p->name(), e->name);
  }
  EXPECT_EQ(make_policy("fifo", {}), nullptr);
  EXPECT_EQ(make_policy("", {}), nullptr);
}

// The table (pollux/policies.h) is what every front end lists: each entry
// this build has makes the policy of its name, names are unique, and one
// entry, taking the elastic job description, is the one sched/pollux runs.
TEST(PolicyTable, EachEntryMakesItsPolicyAndOneIsTheScheduler) {
  std::set<std::string_view> names;
  int schedulers = 0;
  for (const PolicyEntry& e : policies()) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_EQ(find_policy(e.name), &e);
    EXPECT_FALSE(e.label.empty()) << e.name;
    EXPECT_FALSE(e.summary.empty()) << e.name;
    if (e.scheduler) {
      ++schedulers;
      EXPECT_EQ(e.input, JobInput::kElastic) << e.name;
      EXPECT_EQ(&scheduler_policy(), &e);
    }
    if (!e.missing.empty()) continue;
    PolicyOptions o;
    o.fairness_p = e.fairness_p;
    const auto p = make_policy(e.name, o);
    ASSERT_NE(p, nullptr) << e.name;
    EXPECT_EQ(p->name(), e.name);
  }
  EXPECT_EQ(schedulers, 1);
  EXPECT_EQ(find_policy("fifo"), nullptr);
  EXPECT_EQ(policy_names(nullptr), "pollux, optimus, tiresias, sia or backfill");
  std::string generic;  // what the generic tests below and test_policy_random run
  for (const PolicyEntry* e : testing::one_type_policies()) generic.append(e->name).append(" ");
  EXPECT_EQ(generic, "pollux optimus tiresias backfill ");
}

TEST(MakePolicy, RejectsOptionsOutOfRange) {
  auto bad = [](auto change) {
    PolicyOptions o;
    change(o);
    return o;
  };
  EXPECT_THROW(make_policy("pollux", bad([](PolicyOptions& o) { o.max_nodes_per_job = 0; })), std::invalid_argument);
  EXPECT_THROW(make_policy("pollux", bad([](PolicyOptions& o) { o.fairness_p = NAN; })), std::invalid_argument);
  // The published range is exactly what make_policy accepts (pollux-sim checks against it).
  for (const double p : {kMinFairnessP, kMaxFairnessP})
    EXPECT_NE(make_policy("pollux", bad([p](PolicyOptions& o) { o.fairness_p = p; })), nullptr) << p;
  for (const double p : {std::nextafter(kMinFairnessP, -INFINITY), std::nextafter(kMaxFairnessP, INFINITY)})
    EXPECT_THROW(make_policy("pollux", bad([p](PolicyOptions& o) { o.fairness_p = p; })), std::invalid_argument) << p;
  EXPECT_THROW(make_policy("pollux", bad([](PolicyOptions& o) { o.population = 1; })), std::invalid_argument);
  EXPECT_THROW(make_policy("tiresias", bad([](PolicyOptions& o) { o.tiresias_queue_threshold = -1; })),
               std::invalid_argument);
}

TEST(Policies, RejectInconsistentInput) {
  for (const PolicyEntry* e : testing::one_type_policies()) {
    SCOPED_TRACE(e->name);
    const auto p = make_policy(e->name, {});
    const std::vector<JobInfo> jobs{job(1), job(2)};
    EXPECT_THROW(p->optimize(jobs, kNodes, {{}}, 0), std::invalid_argument);
    EXPECT_THROW(p->optimize(jobs, kNodes, {{{7, 1}}, {}}, 0), std::invalid_argument);
    EXPECT_THROW(p->optimize(jobs, kNodes, {{{0, -1}}, {}}, 0), std::invalid_argument);
    EXPECT_THROW(p->optimize({job(1), job(1)}, kNodes, {{}, {}}, 0), std::invalid_argument);
    EXPECT_THROW(p->optimize(jobs, {{-1}}, {{}, {}}, 0), std::invalid_argument);
    JobInfo nan_age = job(3);
    nan_age.age = NAN;
    EXPECT_THROW(p->optimize({nan_age}, kNodes, {{}}, 0), std::invalid_argument);
    JobInfo negative_delay = job(4);  // D comes with the job (the job description), and is checked there
    negative_delay.restart_delay = -1;
    EXPECT_THROW(p->optimize({negative_delay}, kNodes, {{}}, 0), std::invalid_argument);
    // Nothing to schedule is fine.
    EXPECT_TRUE(p->optimize({}, kNodes, {}, 0).empty());
    EXPECT_EQ(p->optimize(jobs, {}, {{}, {}}, 0), (std::vector<Placement>{{}, {}}));
  }
}

TEST(Policies, HandleACurrentAllocationThatNoLongerFits) {
  // Node 0 lost half its GPUs since the last round; job 2's placement is
  // not normalised; both jobs were on node 0.
  const std::vector<NodeInfo> nodes{{2}, {4}};
  std::vector<JobInfo> jobs{job(1, 4), job(2, 4)};
  for (JobInfo& j : jobs) j.requested_gpus = 2;
  const std::vector<Placement> current{{{0, 2}}, {{0, 1}, {0, 1}}};
  for (const PolicyEntry* e : testing::one_type_policies())
    for (SearchKind kind : {SearchKind::kLocal, SearchKind::kGenetic}) {
      PolicyOptions o;
      o.search = kind;
      const auto alloc = make_policy(e->name, o)->optimize(jobs, nodes, current, 0);
      const auto err = check_allocation(jobs, nodes, alloc, o);
      EXPECT_FALSE(err) << e->name << ": " << *err;
    }
}

}  // namespace
}  // namespace pollux

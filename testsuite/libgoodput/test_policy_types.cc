// The Pollux policy on a cluster of several GPU types: one type per job,
// each job on the type where it gains most, the restart penalty on a move
// across types, and - on a cluster of one type - exactly today's decisions.
#include <gtest/gtest.h>

#include <random>

#include "test_policy_apps.h"

namespace pollux {
namespace {

const PerfParams kPerf{0.2, 0.02, 0.10, 0.02, 0.03, 0.005, 2.0};
const GradStats kGrad{0.5, 20.0};
const BatchLimits kLimits{128, 8192, 16, 256, true};

// Per-type speedups of a job whose micro-step runs `speed[t]` times as fast
// on type t as on type 0 (its own fit on every type).
std::vector<SpeedupFn> typed(const std::vector<double>& speed) {
  std::vector<std::optional<PerfParams>> fitted;
  for (double s : speed) {
    PerfParams p = kPerf;
    p.alpha_c /= s;
    p.beta_c /= s;
    fitted.push_back(p);
  }
  return TypedGoodput(fitted, kGrad, kLimits, TypeRatios(speed)).speedups();
}

JobInfo job(std::uint64_t id, std::vector<SpeedupFn> fns, int max_replicas, double age = 1e5, int restarts = 0) {
  return testing::typed_job(id, std::move(fns), max_replicas, age, restarts);
}

int type_of(const std::vector<NodeInfo>& nodes, const Placement& p) {
  if (p.empty()) return -1;
  const int t = nodes[p.front().node].type;
  for (const NodeShare& s : p)
    if (nodes[s.node].type != t) return -2;
  return t;
}

class TypedSearches : public ::testing::TestWithParam<SearchKind> {};
INSTANTIATE_TEST_SUITE_P(Pollux, TypedSearches, ::testing::Values(SearchKind::kLocal, SearchKind::kGenetic),
                         [](const auto& info) { return info.param == SearchKind::kLocal ? "Local" : "Genetic"; });

PolicyOptions with_search(SearchKind kind) {
  PolicyOptions o;
  o.search = kind;
  return o;
}

TEST_P(TypedSearches, EachJobGoesWhereItGainsMost) {
  // Job 1 runs 3x faster on type 1, job 2 only 1.2x: 1 takes the fast node.
  const std::vector<NodeInfo> nodes{{4, 0}, {4, 1}};
  const std::vector<JobInfo> jobs{job(1, typed({1.0, 1.2}), 4), job(2, typed({1.0, 3.0}), 4)};
  const auto p = make_policy("pollux", with_search(GetParam()));
  const auto alloc = p->optimize(jobs, nodes, {{}, {}}, 0);
  ASSERT_FALSE(check_allocation(jobs, nodes, alloc, p->options()));
  EXPECT_EQ(type_of(nodes, alloc[1]), 1);
  EXPECT_EQ(type_of(nodes, alloc[0]), 0);
}

TEST_P(TypedSearches, NeverSpansTwoTypesNorUsesATypeWithoutASpeedup) {
  // Two one-GPU nodes of different types: the job gets one, not both.
  const std::vector<NodeInfo> nodes{{1, 0}, {1, 1}, {4, 2}};
  std::vector<SpeedupFn> fns = typed({1.0, 1.0, 8.0});
  fns[2] = nullptr;  // may not use type 2 (e.g. its request excludes it)
  const std::vector<JobInfo> jobs{job(1, fns, 2)};
  const auto p = make_policy("pollux", with_search(GetParam()));
  const auto alloc = p->optimize(jobs, nodes, {{}}, 0);
  ASSERT_FALSE(check_allocation(jobs, nodes, alloc, p->options()));
  EXPECT_EQ(placement_gpus(alloc[0]), 1);
  EXPECT_GE(type_of(nodes, alloc[0]), 0);
  EXPECT_NE(type_of(nodes, alloc[0]), 2);
}

TEST(TypedPolicy, CheckAllocationRejectsTwoTypesAndAnUnusableType) {
  const std::vector<NodeInfo> nodes{{1, 0}, {1, 1}};
  std::vector<SpeedupFn> fns = typed({1.0, 2.0});
  const std::vector<JobInfo> jobs{job(1, fns, 2)};
  const PolicyOptions o;
  const auto mixed = check_allocation(jobs, nodes, {{{0, 1}, {1, 1}}}, o);
  ASSERT_TRUE(mixed);
  EXPECT_NE(mixed->find("spans GPU types"), std::string::npos);
  fns[1] = nullptr;
  const auto unusable = check_allocation({job(1, fns, 2)}, nodes, {{{1, 1}}}, o);
  ASSERT_TRUE(unusable);
  EXPECT_NE(unusable->find("no speedup"), std::string::npos);
  // An untyped job may span types (type-agnostic callers).
  JobInfo plain = job(1, {}, 2);
  EXPECT_FALSE(check_allocation({plain}, nodes, {{{0, 1}, {1, 1}}}, o));
}

TEST(TypedPolicy, AMoveAcrossTypesPaysTheRestartPenalty) {
  // On type 0 now; type 1 is 1.3x as fast and free.
  const std::vector<NodeInfo> nodes{{2, 0}, {2, 1}};
  const std::vector<Placement> current{{{0, 2}}};
  // Old and never restarted: the move is worth it.
  auto p = make_policy("pollux", {});
  auto alloc = p->optimize({job(1, typed({1.0, 1.3}), 2)}, nodes, current, 0);
  EXPECT_EQ(type_of(nodes, alloc[0]), 1);
  // Young after a restart (factor (90 - 60) / 120 = 0.25): it stays.
  p = make_policy("pollux", {});
  alloc = p->optimize({job(1, typed({1.0, 1.3}), 2, 90, 2)}, nodes, current, 0);
  EXPECT_EQ(alloc[0], current[0]);
  // 400 s old, one restart: with the policy's D (30 s) the factor is
  // 370 / 430 and it moves; with its own restart time of 200 s it is
  // 200 / 600 and it stays.
  JobInfo slow = job(1, typed({1.0, 1.3}), 2, 400, 1);
  p = make_policy("pollux", {});
  EXPECT_EQ(type_of(nodes, p->optimize({slow}, nodes, current, 0)[0]), 1);
  slow.restart_delay = 200;
  p = make_policy("pollux", {});
  EXPECT_EQ(p->optimize({slow}, nodes, current, 0)[0], current[0]);
}

TEST(TypedPolicy, OneTypeGivesTodaysDecisions) {
  // The same rounds, untyped and with every job's speedup as its only
  // type's: identical allocations, fitness and evaluations, both searches.
  for (SearchKind kind : {SearchKind::kLocal, SearchKind::kGenetic}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      std::mt19937_64 rng(seed);
      const testing::Instance in = testing::random_instance(rng, 8, 4, 20, 0.25, true);
      std::vector<JobInfo> typed_jobs = in.jobs;
      for (JobInfo& j : typed_jobs)
        if (j.speedup) j.speedup_by_type = {j.speedup};
      PolicyOptions o;
      o.search = kind;
      if (kind == SearchKind::kGenetic) o.generations = 20;
      auto a = make_policy("pollux", o), b = make_policy("pollux", o);
      const auto untyped = a->optimize(in.jobs, in.nodes, in.current, 0);
      const auto one_type = b->optimize(typed_jobs, in.nodes, in.current, 0);
      EXPECT_EQ(untyped, one_type) << "seed " << seed;
      EXPECT_DOUBLE_EQ(a->last_report().fitness, b->last_report().fitness);
      EXPECT_EQ(a->last_report().evaluations, b->last_report().evaluations);
    }
  }
}

TEST(TypedPolicy, RandomTypedRoundsRespectEveryConstraint) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    const testing::Instance in = testing::typed_instance(rng, 12, 4, 30, 3);
    auto p = make_policy("pollux", {});
    const auto alloc = p->optimize(in.jobs, in.nodes, in.current, 0);
    ASSERT_FALSE(check_allocation(in.jobs, in.nodes, alloc, p->options())) << "seed " << seed;
    int running = 0;
    for (const Placement& pl : alloc) {
      EXPECT_NE(type_of(in.nodes, pl), -2);
      running += !pl.empty();
    }
    EXPECT_GT(running, 10);
  }
}

}  // namespace
}  // namespace pollux

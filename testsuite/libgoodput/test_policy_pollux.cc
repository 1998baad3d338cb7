// The Pollux policy: what its fitness rewards (scalability, fairness, no
// needless restarts), that it reports the fitness it reaches, determinism,
// and that the local search does at least as well as the artifact's GA.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_policy_apps.h"
#include "test_policy_reference.h"

namespace pollux {
namespace {

using testing::reference_fitness;

using testing::job;

PolicyOptions with_search(SearchKind kind, PolicyOptions o = {}) {
  o.search = kind;
  return o;
}

class BothSearches : public ::testing::TestWithParam<SearchKind> {};
INSTANTIATE_TEST_SUITE_P(Pollux, BothSearches, ::testing::Values(SearchKind::kLocal, SearchKind::kGenetic),
                         [](const auto& info) { return info.param == SearchKind::kLocal ? "Local" : "Genetic"; });

TEST_P(BothSearches, BetterSpeedupCurveGetsMoreGpus) {
  // Same throughput model; the noisy job keeps its statistical efficiency
  // at large batches (scales well), the clean one does not.
  const PerfParams perf{0.02, 0.002, 0.10, 0.02, 0.03, 0.005, 2.0};
  const BatchLimits limits{128, 8192, 16, 256, true};
  auto model = [&](GradStats g) {
    auto f = std::make_shared<SpeedupFunction>(GoodputModel(perf, g, 128), limits);
    return SpeedupFn([f](int n, int r) { return (*f)(n, r); });
  };
  const std::vector<JobInfo> jobs{job(1, model({50.0, 0.01}), 8), job(2, model({0.01, 50.0}), 8)};
  const std::vector<NodeInfo> nodes{{8}};
  const auto p = make_policy("pollux", with_search(GetParam()));
  const auto alloc = p->optimize(jobs, nodes, {{}, {}}, 0);
  ASSERT_FALSE(check_allocation(jobs, nodes, alloc, p->options()));
  EXPECT_GT(placement_gpus(alloc[1]), placement_gpus(alloc[0]));
  EXPECT_GE(placement_gpus(alloc[0]), 1);
}

// Minimum normalised speedup over jobs.
double min_speedup(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                   const std::vector<Placement>& alloc) {
  double low = HUGE_VAL;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    low = std::min(low, testing::normalised_speedup(jobs[i], nodes, jobs.size(), placement_nodes(alloc[i]),
                                                    placement_gpus(alloc[i])));
  return low;
}

TEST_P(BothSearches, MoreNegativePIsFairer) {
  // Three linear jobs and three that barely scale share 12 GPUs. A
  // throughput-minded p = 1 favours the linear jobs; p -> -inf approaches
  // max-min fairness.
  auto saturating = [](int, int r) { return r <= 0 ? 0.0 : 1.0 + 0.05 * (r - 1); };
  std::vector<JobInfo> jobs;
  for (std::uint64_t i = 0; i < 3; ++i) jobs.push_back(job(i, nullptr, 12));
  for (std::uint64_t i = 3; i < 6; ++i) jobs.push_back(job(i, saturating, 12));
  const std::vector<NodeInfo> nodes{{4}, {4}, {4}};
  std::vector<double> fairness;
  for (double p : {1.0, 0.0, -1.0, -10.0}) {
    PolicyOptions o = with_search(GetParam());
    o.fairness_p = p;
    const auto alloc = make_policy("pollux", o)->optimize(jobs, nodes, std::vector<Placement>(6), 0);
    ASSERT_FALSE(check_allocation(jobs, nodes, alloc, o));
    fairness.push_back(min_speedup(jobs, nodes, alloc));
  }
  for (std::size_t k = 1; k < fairness.size(); ++k) EXPECT_GE(fairness[k], fairness[k - 1] - 1e-12) << k;
  EXPECT_GT(fairness.back(), fairness.front());
}

TEST_P(BothSearches, LargePositivePStillAllocates) {
  // With p = 50 every term is (x + 1e-3)^50, around 1e-30 for these jobs:
  // gains that small are still gains (the local search once rejected them
  // against an absolute tolerance and left the cluster idle).
  std::vector<JobInfo> jobs;
  for (std::uint64_t i = 0; i < 3; ++i) jobs.push_back(job(i, nullptr, 4));
  const std::vector<NodeInfo> nodes{{4}, {4}, {4}};
  for (const double p : {10.0, 50.0}) {
    SCOPED_TRACE(p);
    PolicyOptions o = with_search(GetParam());
    o.fairness_p = p;
    const auto alloc = make_policy("pollux", o)->optimize(jobs, nodes, std::vector<Placement>(3), 0);
    ASSERT_FALSE(check_allocation(jobs, nodes, alloc, o));
    for (std::size_t i = 0; i < alloc.size(); ++i) EXPECT_EQ(placement_gpus(alloc[i]), 4) << i;
  }
}

TEST_P(BothSearches, YoungRestartedJobIsNotMovedForAMarginalGain) {
  // Job 1 (2 GPUs on node 0) could double on the empty node 1, but it was
  // restarted twice in 100 s: any move keeps only (100 - 60) / 130 of its
  // speedup. An old job in the same spot does move.
  const std::vector<NodeInfo> nodes{{4}, {4}};
  const std::vector<Placement> current{{{0, 2}}, {{0, 2}}};
  for (const bool young : {true, false}) {
    SCOPED_TRACE(young ? "young" : "old");
    const std::vector<JobInfo> jobs{job(1, nullptr, 4, young ? 100 : 1e5, young ? 2 : 0), job(2, nullptr, 2)};
    const auto alloc = make_policy("pollux", with_search(GetParam()))->optimize(jobs, nodes, current, 0);
    ASSERT_FALSE(check_allocation(jobs, nodes, alloc, with_search(GetParam())));
    EXPECT_EQ(alloc[1], current[1]);  // at its maximum: stays
    if (young)
      EXPECT_EQ(alloc[0], current[0]);
    else
      EXPECT_EQ(placement_gpus(alloc[0]), 4);
  }
}

TEST_P(BothSearches, KeepsAPlacementWhenNothingBetterExists) {
  std::mt19937_64 rng(3);
  testing::Instance in = testing::random_instance(rng, 4, 4, 6);
  // Every job is linear and at its maximum where it is (or may not run at
  // all), so any move only costs the restart penalty.
  for (std::size_t i = 0; i < in.jobs.size(); ++i) {
    in.jobs[i].speedup = nullptr;
    in.jobs[i].min_replicas = 0;
    in.jobs[i].max_replicas = placement_gpus(in.current[i]);
    in.jobs[i].restarts = 0;
  }
  PolicyOptions o = with_search(GetParam());
  o.interference_avoidance = false;  // the random current may break it
  const auto alloc = make_policy("pollux", o)->optimize(in.jobs, in.nodes, in.current, 0);
  for (std::size_t i = 0; i < alloc.size(); ++i)
    EXPECT_EQ(alloc[i], in.current[i]) << i;
}

TEST_P(BothSearches, ReportsTheFitnessOfWhatItReturns) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    const testing::Instance in = testing::random_instance(rng, 1 + seed % 6, seed % 3 == 0 ? 0 : 4, 1 + seed % 9);
    PolicyOptions o = with_search(GetParam());
    o.fairness_p = std::vector<double>{-1, 0, 1, -3, 0.5}[seed % 5];
    o.population = 20;
    o.generations = 10;
    const auto p = make_policy("pollux", o);
    const auto alloc = p->optimize(in.jobs, in.nodes, in.current, 0);
    const double want = reference_fitness(in.jobs, in.nodes, in.current, alloc, o);
    EXPECT_NEAR(p->last_report().fitness, want, 1e-9 * std::fabs(want)) << seed;
    EXPECT_GT(p->last_report().evaluations, 0);
    EXPECT_GE(p->last_report().seconds, 0.0);
  }
}

TEST_P(BothSearches, SameSeedSameResultOverRounds) {
  std::mt19937_64 rng(11);
  testing::Instance in = testing::random_instance(rng, 6, 4, 12);
  PolicyOptions o = with_search(GetParam());
  o.seed = 42;
  o.population = 30;
  o.generations = 20;
  const auto a = make_policy("pollux", o), b = make_policy("pollux", o);
  for (int round = 0; round < 3; ++round) {
    const auto x = a->optimize(in.jobs, in.nodes, in.current, 60.0 * round);
    const auto y = b->optimize(in.jobs, in.nodes, in.current, 60.0 * round);
    ASSERT_EQ(x, y) << "round " << round;
    EXPECT_EQ(a->last_report().fitness, b->last_report().fitness);
    in.current = x;
    for (JobInfo& j : in.jobs) j.age += 60;
    in.jobs.pop_back();  // a job completes: the GA reseeds by id
    in.current.pop_back();
  }
}

TEST(PolluxGenetic, DifferentSeedsMayDiffer) {
  std::mt19937_64 rng(5);
  const testing::Instance in = testing::random_instance(rng, 8, 4, 16);
  PolicyOptions o = with_search(SearchKind::kGenetic);
  o.population = 20;
  o.generations = 10;
  std::vector<std::vector<Placement>> results;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    o.seed = seed;
    results.push_back(make_policy("pollux", o)->optimize(in.jobs, in.nodes, in.current, 0));
  }
  bool differ = false;
  for (const auto& r : results) differ = differ || r != results.front();
  EXPECT_TRUE(differ);
}

// The local search must reach at least the GA's fitness (the paper's GA,
// population 100, 100 generations, same fitness) on every one of 50 random
// rounds of realistic size (2-16 nodes, 1-40 jobs, every option mix). On
// this generator it was never below the GA over 1000 rounds (seeds
// 1000-1999: equal on 137, above on the rest). On tiny rounds (1-3 nodes,
// 1-6 jobs) it can be: doc/policy.md, "Local search against the GA".
TEST(PolluxSearch, LocalIsAtLeastAsGoodAsGenetic) {
  int above = 0;
  for (unsigned c = 0; c < 50; ++c) {
    std::mt19937_64 rng(1000 + c);
    const int nodes = std::uniform_int_distribution<int>(2, 16)(rng);
    const int jobs = std::uniform_int_distribution<int>(1, 40)(rng);
    const testing::Instance in = testing::random_instance(rng, nodes, c % 3 == 0 ? 0 : 4, jobs);
    PolicyOptions o;
    o.interference_avoidance = c % 2 == 0;
    o.uniform_gpus_per_node = c % 5 == 0;
    o.max_nodes_per_job = c % 4 == 0 ? 2 : 16;
    o.fairness_p = c % 7 == 0 ? 0.0 : -1.0;
    o.seed = c;
    o.search = SearchKind::kLocal;
    const auto local = make_policy("pollux", o);
    local->optimize(in.jobs, in.nodes, in.current, 0);
    o.search = SearchKind::kGenetic;
    const auto ga = make_policy("pollux", o);
    ga->optimize(in.jobs, in.nodes, in.current, 0);
    const double fl = local->last_report().fitness, fg = ga->last_report().fitness;
    EXPECT_GE(fl, fg - 1e-9 * std::fabs(fg)) << "round " << c;
    above += fl > fg + 1e-9 * std::fabs(fg);
  }
  EXPECT_GT(above, 25);  // the local search usually finds strictly better rounds
}

// A tiny round where a young job (age 27 s, one restart: any move zeroes
// its speedup) holds 4 + 1 GPUs on two nodes, and a job that needs at
// least 2 GPUs has none. Starting from the current allocation left no room
// for the second job and descent traded the first one for it (fitness
// 0.0059 against the GA's 0.18); the start from the pinned jobs alone
// serves both.
TEST(PolluxSearch, LocalKeepsAPinnedJobWhereTheGaDoes) {
  const unsigned c = 1432;  // round 1432 of the tiny-round generator
  std::mt19937_64 rng(1000 + c);
  const int nodes = std::uniform_int_distribution<int>(1, 3)(rng);
  const int jobs = std::uniform_int_distribution<int>(1, 6)(rng);
  const testing::Instance in = testing::random_instance(rng, nodes, 4, jobs);
  ASSERT_EQ(in.jobs.size(), 6u);
  ASSERT_EQ(in.current[1], (Placement{{0, 4}, {2, 1}}));
  ASSERT_EQ(in.jobs[1].restarts, 1);
  ASSERT_LT(in.jobs[1].age, 30.0);
  PolicyOptions o;
  o.max_nodes_per_job = 2;
  o.seed = c;
  const auto local = make_policy("pollux", o);
  const auto alloc = local->optimize(in.jobs, in.nodes, in.current, 0);
  ASSERT_FALSE(check_allocation(in.jobs, in.nodes, alloc, o));
  EXPECT_EQ(alloc[1], in.current[1]);
  for (std::size_t i = 0; i < alloc.size(); ++i) EXPECT_GT(placement_gpus(alloc[i]), 0) << i;
  o.search = SearchKind::kGenetic;
  const auto ga = make_policy("pollux", o);
  ga->optimize(in.jobs, in.nodes, in.current, 0);
  EXPECT_GE(local->last_report().fitness, ga->last_report().fitness - 1e-9);
}

}  // namespace
}  // namespace pollux

namespace pollux {
namespace {

// A scheduler that restarts and restores the search state decides what it
// would have decided without the restart (sched/pollux's pollux_state).
TEST(PolluxSearchState, RestoredStateContinuesTheSameRounds) {
  std::mt19937_64 gen(7);
  std::vector<testing::Instance> rounds;
  for (int r = 0; r < 4; ++r) rounds.push_back(testing::random_instance(gen, 6, 4, 10, 0.3));
  PolicyOptions o;
  o.uniform_gpus_per_node = true;
  o.search_budget = 2000;
  auto running = make_policy("pollux", o);
  for (int r = 0; r < 2; ++r) running->optimize(rounds[r].jobs, rounds[r].nodes, rounds[r].current, 0);
  const std::string saved = running->search_state();
  ASSERT_FALSE(saved.empty());
  auto restarted = make_policy("pollux", o);
  ASSERT_TRUE(restarted->restore_search_state(saved));
  EXPECT_EQ(restarted->search_state(), saved);
  for (int r = 2; r < 4; ++r)
    EXPECT_EQ(running->optimize(rounds[r].jobs, rounds[r].nodes, rounds[r].current, 0),
              restarted->optimize(rounds[r].jobs, rounds[r].nodes, rounds[r].current, 0))
        << "round " << r;
}

TEST(PolluxSearchState, RefusesTextItDidNotWrite) {
  auto p = make_policy("pollux", PolicyOptions{});
  const std::string before = p->search_state();
  for (const char* bad : {"", "pollux-mt19937_64 ", "pollux-mt19937_64 1 2 3", "tiresias", "pollux-mt19937_64 x"})
    EXPECT_FALSE(p->restore_search_state(bad)) << bad;
  std::string extra = before + " 5";
  EXPECT_FALSE(p->restore_search_state(extra));
  EXPECT_EQ(p->search_state(), before);
  EXPECT_TRUE(make_policy("tiresias", PolicyOptions{})->restore_search_state(""));
}

}  // namespace
}  // namespace pollux

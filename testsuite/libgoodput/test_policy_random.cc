// Every allocation any policy returns passes check_allocation: hundreds of
// random rounds (random clusters, job mixes with real goodput models and
// linear jobs, random current allocations), every option mix, and several
// consecutive rounds so that the GA's reseeding and changing job sets are
// exercised.
#include <gtest/gtest.h>

#include <random>

#include "test_policy_apps.h"

namespace pollux {
namespace {

struct Mix {
  bool interference, uniform;
  int max_nodes;
  double p;
};

Mix random_mix(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const double ps[] = {-10, -1, -0.5, 0, 0.5, 1};
  return Mix{pick(0, 1) == 1, pick(0, 2) == 0, std::vector<int>{1, 2, 4, 16}[pick(0, 3)], ps[pick(0, 5)]};
}

void expect_valid(const PolicyEntry& policy, const testing::Instance& in, const std::vector<Placement>& alloc,
                  PolicyOptions o, unsigned round) {
  if (policy.greedy_placement) {
    o.interference_avoidance = false;  // not constraints of the baselines
    o.max_nodes_per_job = 1 << 20;
  }
  const auto err = check_allocation(in.jobs, in.nodes, alloc, o);
  EXPECT_FALSE(err) << policy.name << " round " << round << ": " << *err;
}

TEST(PolicyRandom, EveryAllocationIsValid) {
  for (unsigned round = 0; round < 300; ++round) {
    std::mt19937_64 rng(round);
    const int nodes = std::uniform_int_distribution<int>(1, 12)(rng);
    const int jobs = std::uniform_int_distribution<int>(0, 24)(rng);
    testing::Instance in = testing::random_instance(rng, nodes, round % 2 == 0 ? 0 : 4, jobs, 0.3);
    // Optimus needs iteration times: serial + parallel / R.
    for (JobInfo& j : in.jobs) {
      const double serial = std::uniform_real_distribution<double>(0.0, 0.2)(rng);
      j.iteration_time = [serial](int r) { return serial + 1.0 / r; };
      j.remaining_iterations = std::uniform_real_distribution<double>(0.0, 1e4)(rng);
    }
    const Mix mix = random_mix(rng);
    PolicyOptions o;
    o.interference_avoidance = mix.interference;
    o.uniform_gpus_per_node = mix.uniform;
    o.max_nodes_per_job = mix.max_nodes;
    o.fairness_p = mix.p;
    o.population = 12;  // validity does not depend on the GA's size
    o.generations = 6;
    o.seed = round;
    for (const PolicyEntry* policy : testing::one_type_policies()) {
      for (SearchKind kind : {SearchKind::kLocal, SearchKind::kGenetic}) {
        if (kind == SearchKind::kGenetic && !policy->scheduler) continue;  // the search kinds are Pollux's
        o.search = kind;
        const auto p = make_policy(policy->name, o);
        testing::Instance state = in;
        for (int step = 0; step < 2; ++step) {
          const auto alloc = p->optimize(state.jobs, state.nodes, state.current, 60.0 * step);
          expect_valid(*policy, state, alloc, o, round);
          // A rigid job runs at the user's size or not at all.
          if (policy->input == JobInput::kRigid || policy->input == JobInput::kRigidTimeLimit)
            for (std::size_t i = 0; i < alloc.size(); ++i)
              if (!alloc[i].empty()) EXPECT_EQ(placement_gpus(alloc[i]), state.jobs[i].requested_gpus);
          // Next round: the allocation becomes current, the first job
          // leaves, the jobs age.
          state.current = alloc;
          if (!state.jobs.empty()) {
            state.jobs.erase(state.jobs.begin());
            state.current.erase(state.current.begin());
          }
          for (JobInfo& j : state.jobs) j.age += 60;
        }
      }
    }
  }
}

TEST(PolicyRandom, ValidOnAHeterogeneousLargeCluster) {
  std::mt19937_64 rng(99);
  const testing::Instance in = testing::random_instance(rng, 128, 0, 200);
  for (SearchKind kind : {SearchKind::kLocal, SearchKind::kGenetic}) {
    PolicyOptions o;
    o.search = kind;
    o.population = 20;
    o.generations = 5;
    const auto alloc = make_policy("pollux", o)->optimize(in.jobs, in.nodes, in.current, 0);
    expect_valid(*find_policy("pollux"), in, alloc, o, 0);
  }
}

}  // namespace
}  // namespace pollux

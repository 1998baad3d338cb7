// The two searches of the Pollux policy over the same PolluxProblem.
#ifndef POLLUX_SRC_POLLUX_SEARCH_H
#define POLLUX_SRC_POLLUX_SEARCH_H

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "pollux_problem.h"

namespace pollux::detail {

struct SearchResult {
  std::vector<Placement> alloc;  ///< priority order (PolluxProblem's)
  long long evaluations = 0;
};

/// The artifact's genetic algorithm: NSGA-II on (fitness, cluster utility),
/// binary tournaments, single-point crossover over jobs (probability 0.9),
/// the artifact's mutation and repair, duplicate elimination; seeded with
/// the previous round's Pareto front (jobs matched by id; new jobs start
/// empty) or, in the first round, with the current allocation. Returns the
/// best-fitness member of the final front. One evaluation = one individual.
class GeneticSearch {
 public:
  SearchResult run(const PolluxProblem& pb, std::mt19937_64& rng);

 private:
  std::vector<std::unordered_map<std::uint64_t, Placement>> seeds_;
};

/// Greedy construction plus local search (see pollux_local_search.cc and
/// doc/policy.md). One evaluation = one candidate placement of one job.
SearchResult local_search(const PolluxProblem& pb, long long budget, std::mt19937_64& rng);

}  // namespace pollux::detail

#endif  // POLLUX_SRC_POLLUX_SEARCH_H

// The Pollux policy (reference section 4): maximise the generalised mean of
// the jobs' normalised speedups, with the restart penalty, subject to the
// constraints of check_allocation(). The problem is pollux_problem.h; the
// searches are pollux_search.h; doc/policy.md explains the choices.
#include <algorithm>
#include <sstream>

#include "policy_common.h"
#include "pollux_search.h"

namespace pollux::detail {
namespace {

class PolluxPolicy final : public Policy {
 public:
  explicit PolluxPolicy(const PolicyOptions& options) : Policy(options), rng_(options.seed) {}
  std::string_view name() const noexcept override { return "pollux"; }

  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current, double) override {
    const Stopwatch clock;
    validate_round(name(), jobs, nodes, current);
    const PolluxProblem pb(jobs, nodes, current, options_);
    SearchResult found;
    if (options_.search == SearchKind::kGenetic) {
      found = genetic_.run(pb, rng_);
      found.evaluations *= pb.num_jobs();  // one individual = one term per job
    } else {
      const long long budget = options_.search_budget > 0 ? options_.search_budget
                                                          : static_cast<long long>(options_.population) *
                                                                options_.generations * std::max(pb.num_jobs(), 1);
      found = local_search(pb, budget, rng_);
    }
    found.alloc.resize(pb.num_jobs());
    // One GPU type per job: the local search never mixes types; the GA's
    // mutations may, and such a placement is worth nothing anyway.
    for (Placement& p : found.alloc)
      if (pb.type_of(p) < 0) p.clear();
    const double fitness = pb.fitness(found.alloc);
    std::vector<Placement> out(jobs.size());
    for (int j = 0; j < pb.num_jobs(); ++j) out[pb.caller_index(j)] = std::move(found.alloc[j]);
    report_ = PolicyReport{fitness, found.evaluations, clock.seconds()};
    return out;
  }

  // The generator's state as the standard library writes it (its words,
  // space-separated), tagged so that no other text is taken for one.
  std::string search_state() const override {
    std::ostringstream out;
    out << kTag << rng_;
    return out.str();
  }

  bool restore_search_state(std::string_view state) override {
    if (state.substr(0, kTag.size()) != kTag) return false;
    std::istringstream in{std::string(state.substr(kTag.size()))};
    std::mt19937_64 rng;
    in >> rng;
    if (in.fail() || !(in >> std::ws).eof()) return false;
    rng_ = rng;
    return true;
  }

 private:
  static constexpr std::string_view kTag = "pollux-mt19937_64 ";
  std::mt19937_64 rng_;
  GeneticSearch genetic_;
};

}  // namespace

std::unique_ptr<Policy> make_pollux_policy(const PolicyOptions& options) {
  return std::make_unique<PolluxPolicy>(options);
}

}  // namespace pollux::detail

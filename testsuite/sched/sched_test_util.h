// Helpers shared by the scheduling core's unit tests.
#ifndef POLLUX_SCHED_TEST_UTIL_H
#define POLLUX_SCHED_TEST_UTIL_H

#include <csignal>
#include <utility>
#include <vector>

#include "sched/round.h"
#include "pollux/policy.h"

namespace pollux::sched::test {

/// A policy that answers what the test scripts and remembers what it saw.
class ScriptedPolicy final : public Policy {
 public:
  explicit ScriptedPolicy(PolicyOptions options = {}) : Policy(options) {}
  std::string_view name() const noexcept override { return "scripted"; }
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current, double) override {
    calls++;
    seen_jobs = jobs;
    seen_nodes = nodes;
    seen_current = current;
    if (throws) throw std::invalid_argument("scripted failure");
    return answer;
  }
  std::vector<Placement> answer;
  bool throws = false;
  int calls = 0;
  std::vector<JobInfo> seen_jobs;
  std::vector<NodeInfo> seen_nodes;
  std::vector<Placement> seen_current;
};

inline Placement on(std::vector<std::pair<int, int>> shares) {
  Placement p;
  for (auto [node, gpus] : shares) p.push_back({node, gpus});
  return p;
}

/// A 4 x 4-GPU cluster, nodes n1..n4.
inline std::vector<NodeSnapshot> four_nodes() {
  return {{"n1", 4, 0, true}, {"n2", 4, 0, true}, {"n3", 4, 0, true}, {"n4", 4, 0, true}};
}

/// A round's inputs on four_nodes() at `now`, and plan_round over them.
struct RoundFixture {
  Snapshot snap;
  std::vector<JobInput> inputs;
  Params params;
  ScriptedPolicy policy;
  explicit RoundFixture(double now) {
    snap.now = now;
    snap.nodes = four_nodes();
  }
  /// A job profiled on `profiled` GPUs, whose agent listens on SIGUSR1
  /// (elastic) in its current run.
  void add(ElasticJobSnapshot j, int profiled) {
    inputs.emplace_back();
    inputs.back().max_profiled_replicas = profiled;
    inputs.back().resize_signal = SIGUSR1;
    inputs.back().hint_restarts = j.restarts;
    snap.jobs.push_back(std::move(j));
  }
  RoundResult run(bool with_policy = true, bool arrivals = false) {
    return plan_round(snap, inputs, params, with_policy ? &policy : nullptr, arrivals);
  }
};

}  // namespace pollux::sched::test

#endif  // POLLUX_SCHED_TEST_UTIL_H

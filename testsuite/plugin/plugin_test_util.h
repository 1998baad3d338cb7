// Helpers shared by the plugin's unit tests.
#ifndef POLLUX_PLUGIN_TEST_UTIL_H
#define POLLUX_PLUGIN_TEST_UTIL_H

#include <utility>
#include <vector>

#include "core/round.h"
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

}  // namespace pollux::sched::test

#endif  // POLLUX_PLUGIN_TEST_UTIL_H

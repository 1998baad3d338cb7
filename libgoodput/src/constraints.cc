// Placeholder until the policy work lands (issue 2); replaced wholesale.
#include "pollux/policy.h"
namespace pollux {
std::optional<std::string> check_allocation(const std::vector<JobInfo>&, const std::vector<NodeInfo>&,
                                            const std::vector<Placement>&, const PolicyOptions&) {
  return std::string("check_allocation: not implemented yet");
}
}  // namespace pollux

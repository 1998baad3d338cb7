// Placeholder until the policy work lands (issue 2); replaced wholesale.
#include "pollux/policy.h"
namespace pollux {
std::unique_ptr<Policy> make_policy(std::string_view, const PolicyOptions&) { return nullptr; }
}  // namespace pollux

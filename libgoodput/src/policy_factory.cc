// make_policy (see pollux/policy.h).
#include "policy_common.h"

namespace pollux {

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& options) {
  if (name != "pollux" && name != "tiresias" && name != "optimus") return nullptr;
  detail::validate_options(options);
  if (name == "pollux") return detail::make_pollux_policy(options);
  if (name == "tiresias") return detail::make_tiresias_policy(options);
  return detail::make_optimus_policy(options);
}

}  // namespace pollux

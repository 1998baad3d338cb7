// The agent's own state (agent.yaml in a checkpoint), read back after a
// requeue from a directory the job's user can write. Invariant: a state
// that parses re-emits to text that parses to the same emitted text.
#include <stdexcept>

#include "agent_state.h"
#include "fuzz_util.h"

using namespace pollux::agent_detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  AgentState state;
  try {
    state = parse_agent_state(pollux::fuzz::text(data, size));
  } catch (const std::runtime_error& e) {
    const std::string why = e.what();
    pollux::fuzz::require(!why.empty(), "empty reason");
    return 0;
  }
  const std::string once = emit_agent_state(state);
  try {
    pollux::fuzz::require(emit_agent_state(parse_agent_state(once)) == once, "re-emitted state differs:\n" + once);
  } catch (const std::runtime_error& e) {
    pollux::fuzz::require(false, std::string("re-emitted state rejected: ") + e.what() + "\n" + once);
  }
  return 0;
}

// The C handle behind pollux/agent_c.h, shared by libpollux-agent and
// libpollux-agent-cuda (which creates handles too).
#ifndef POLLUX_AGENT_C_HANDLE_H
#define POLLUX_AGENT_C_HANDLE_H

#include <memory>
#include <string>

#include "pollux/agent.h"
#include "pollux/agent_c.h"

struct pollux_agent {
  std::unique_ptr<pollux::Agent> agent;
};

namespace pollux::agent_detail {

/// Converts C options (validated by Agent later).
AgentOptions from_c(const pollux_agent_options& o);
/// Records the thread's last error for pollux_agent_last_error().
void set_c_error(const std::string& message);

/// Runs f, turning any exception into -1 and a recorded error.
template <typename F>
int c_call(F&& f) noexcept {
  try {
    return f();
  } catch (const std::exception& e) {
    set_c_error(e.what());
  } catch (...) {
    set_c_error("unknown error");
  }
  return -1;
}

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_C_HANDLE_H

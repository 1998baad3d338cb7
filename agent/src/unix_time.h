// The wall clock as hints and checkpoints record it: Unix seconds.
#ifndef POLLUX_AGENT_UNIX_TIME_H
#define POLLUX_AGENT_UNIX_TIME_H

#include <chrono>

namespace pollux::agent_detail {

inline double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_UNIX_TIME_H

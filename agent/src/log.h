// The agent's messages on stderr: "pollux-agent[rank]: ...".
#ifndef POLLUX_AGENT_LOG_H
#define POLLUX_AGENT_LOG_H

namespace pollux::agent_detail {

void log(int rank, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_LOG_H

// stderr messages of the agent (see log.h).
#include "log.h"

#include <cstdarg>
#include <cstdio>

namespace pollux::agent_detail {

void log(int rank, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  // One write per line, so that the ranks' lines do not interleave.
  std::fprintf(stderr, "pollux-agent[%d]: %s\n", rank, msg);
  std::fflush(stderr);
}

}  // namespace pollux::agent_detail

// The micro-batch limit a job learnt from running out of memory
// (<checkpoint dir>/memory-limit, agent/src/memory_limit.h), read back by a
// later run from a directory the job's user can write. Invariants: a
// rejection says why on one printable line; a limit that parses is in
// range and re-emits to text that parses to the same emitted text.
#include <stdexcept>

#include "fuzz_util.h"
#include "memory_limit.h"

using namespace pollux::agent_detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  MemoryLimit m;
  try {
    m = parse_memory_limit(pollux::fuzz::text(data, size));
  } catch (const std::runtime_error& e) {
    pollux::fuzz::require_one_line(e.what(), "", 512);
    return 0;
  }
  pollux::fuzz::require(m.max_atomic >= 1 && m.max_atomic <= 100000000, "max_atomic out of range");
  const std::string once = emit_memory_limit(m);
  try {
    pollux::fuzz::require(emit_memory_limit(parse_memory_limit(once)) == once, "re-emitted limit differs:\n" + once);
  } catch (const std::runtime_error& e) {
    pollux::fuzz::require(false, std::string("re-emitted limit rejected: ") + e.what() + "\n" + once);
  }
  return 0;
}

// The learnt micro-batch limit (see memory_limit.h).
#include "memory_limit.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace pollux::agent_detail {

int lowered_max_atomic(int micro_batch, int largest_run, int min_atomic, int max_atomic) {
  if (micro_batch <= min_atomic)
    throw std::runtime_error("micro-batch " + std::to_string(micro_batch) +
                             " ran out of memory and it is the job's smallest (min_atomic " +
                             std::to_string(min_atomic) +
                             "): nothing smaller to try; lower the smallest micro-batch, or give each rank more "
                             "memory or less to hold (a smaller model, mixed precision, sharding)");
  const int limit = largest_run > 0 && largest_run < micro_batch ? largest_run : micro_batch - 1;
  return std::clamp(limit, min_atomic, std::max(min_atomic, max_atomic));
}

std::string emit_memory_limit(const MemoryLimit& m) {
  return "# pollux agent: micro-batches above max_atomic ran out of memory (doc/agent.md, \"Memory\")\n"
         "max_atomic: " + std::to_string(m.max_atomic) + "\nout_of_memory_at: " + std::to_string(m.out_of_memory_at) +
         "\njob_id: " + std::to_string(m.job_id) + "\n";
}

namespace {

// A piece of the file quoted in an error: printable ASCII, at most 40
// bytes (the file is the job's own, but may be damaged).
std::string shown(std::string_view v) {
  std::string out;
  for (const char c : v.substr(0, 40)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return v.size() > 40 ? out + "..." : out;
}

}  // namespace

MemoryLimit parse_memory_limit(std::string_view text) {
  MemoryLimit m;
  bool have_limit = false, have_job = false;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line[0] == '#') continue;
    const std::size_t colon = line.find(": ");
    if (colon == std::string_view::npos) throw std::runtime_error("malformed line '" + shown(line) + "'");
    const std::string_view key = line.substr(0, colon), value = line.substr(colon + 2);
    long long v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 0 || v > 4294967295LL)
      throw std::runtime_error(shown(key) + ": '" + shown(value) + "' is not a count");
    if (key == "max_atomic") {
      if (v < 1 || v > 100000000) throw std::runtime_error("max_atomic: " + std::to_string(v) + " is out of range");
      m.max_atomic = static_cast<int>(v);
      have_limit = true;
    } else if (key == "out_of_memory_at") {
      m.out_of_memory_at = static_cast<int>(std::min<long long>(v, 100000000));
    } else if (key == "job_id") {
      m.job_id = static_cast<std::uint32_t>(v);
      have_job = true;
    } else {
      throw std::runtime_error("unknown key '" + shown(key) + "'");
    }
  }
  if (!have_limit || !have_job) throw std::runtime_error(have_limit ? "no job_id" : "no max_atomic");
  return m;
}

}  // namespace pollux::agent_detail

// SPDX-License-Identifier: GPL-2.0-or-later
// The rounds' memory across restarts (see round_memory.h).
#include "round_memory.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <unistd.h>

#include "pollux/atomic_file.h"

namespace pollux::sched {
namespace {

constexpr std::string_view kHeader = "pollux_rounds 1\n";

// The value of line `key=` at the start of `text`, which then moves past it.
std::optional<std::string_view> take_line(std::string_view& text, std::string_view key) {
  if (text.substr(0, key.size()) != key) return std::nullopt;
  const auto end = text.find('\n');
  if (end == std::string_view::npos) return std::nullopt;  // truncated
  const std::string_view value = text.substr(key.size(), end - key.size());
  text.remove_prefix(end + 1);
  return value;
}

}  // namespace

std::string format_round_memory(const RoundMemory& m) {
  char time[64];
  std::snprintf(time, sizeof time, "%.3f", m.last_periodic);
  std::string out(kHeader);
  out += "last_periodic=";
  out += time;
  out += "\nsearch=";
  out += m.search_state;
  out += '\n';
  return out;
}

std::optional<RoundMemory> parse_round_memory(std::string_view text) {
  if (text.substr(0, kHeader.size()) != kHeader) return std::nullopt;
  text.remove_prefix(kHeader.size());
  const auto time = take_line(text, "last_periodic=");
  if (!time || time->empty()) return std::nullopt;
  const std::string t(*time);
  char* end = nullptr;
  errno = 0;
  const double when = std::strtod(t.c_str(), &end);
  if (errno != 0 || end != t.c_str() + t.size() || !std::isfinite(when) || when < 0) return std::nullopt;
  const auto search = take_line(text, "search=");
  if (!search || !text.empty()) return std::nullopt;
  return RoundMemory{when, std::string(*search)};
}

std::optional<RoundMemory> read_round_memory(const std::string& path, std::string* why) noexcept {
  try {
    const FileRead r = read_file_checked(path, 1 << 16, ::geteuid());
    if (!r) {
      *why = r.error;
      return std::nullopt;
    }
    auto m = parse_round_memory(r.data);
    if (!m) *why = path + ": not a memory of sched/pollux's rounds (damaged, or another version)";
    return m;
  } catch (const std::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
}

std::string write_round_memory(const std::string& path, const RoundMemory& memory) noexcept {
  try {
    return write_file_atomic(path, format_round_memory(memory), 0600);
  } catch (const std::exception& e) {
    return e.what();
  }
}

double first_round_delay(const std::optional<RoundMemory>& m, double now, double interval) {
  if (!m || m->last_periodic > now) return interval;
  return std::max(0.0, m->last_periodic + interval - now);
}

}  // namespace pollux::sched

// SPDX-License-Identifier: GPL-2.0-or-later
// Escaping and capping untrusted text for logs (see log_safe.h).
#include "log_safe.h"

#include <algorithm>

namespace pollux::sched {
namespace {

// The escaped form of one byte, into `out` (at most 4 bytes).
void escape(unsigned char c, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    case '\\': out += "\\\\"; return;
    default: break;
  }
  if (c >= 0x20 && c < 0x7f) {
    out += static_cast<char>(c);
    return;
  }
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

}  // namespace

std::string log_safe(std::string_view text, std::size_t max_bytes) {
  max_bytes = std::max<std::size_t>(max_bytes, 32);
  const std::string marker = "...(" + std::to_string(text.size()) + " bytes)";
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 4);
  std::size_t keep = 0;  // the longest prefix, at an escape's boundary, that leaves room for the marker
  for (const char c : text) {
    escape(static_cast<unsigned char>(c), out);
    if (out.size() + marker.size() <= max_bytes) keep = out.size();
    if (out.size() > max_bytes) {
      out.resize(keep);
      return out + marker;
    }
  }
  return out;
}

}  // namespace pollux::sched

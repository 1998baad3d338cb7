// GPU type names (see pollux/gpu_type.h).
#include "pollux/gpu_type.h"

namespace pollux {
namespace {

bool kept(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'; }
bool separator(char c) noexcept { return c == '_' || c == '-' || c == '.'; }
char lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

void trim_underscores(std::string& s) {
  while (!s.empty() && s.back() == '_') s.pop_back();
  std::size_t lead = 0;
  while (lead < s.size() && s[lead] == '_') ++lead;
  s.erase(0, lead);
}

}  // namespace

bool valid_gpu_type(std::string_view name) noexcept {
  if (name.empty() || name.size() > kGpuTypeMaxLen) return false;
  for (char c : name)
    if (!kept(c) && c != '_') return false;
  return true;
}

std::string normalize_gpu_type(std::string_view text) {
  std::string out;
  bool in_run = false;
  for (char raw : text) {
    const char c = lower(raw);
    if (kept(c)) {
      out += c;
      in_run = false;
    } else if (!in_run) {
      out += '_';
      in_run = true;
    }
  }
  trim_underscores(out);
  if (out.size() > kGpuTypeMaxLen) {
    out.resize(kGpuTypeMaxLen);
    trim_underscores(out);
  }
  return out;
}

bool gpu_type_matches(std::string_view gres_type, std::string_view reported) noexcept {
  std::string want;
  try {
    want = normalize_gpu_type(gres_type);
  } catch (...) {
    return false;  // out of memory: no match
  }
  if (want.empty() || reported.empty()) return false;
  for (std::size_t pos = reported.find(want); pos != std::string_view::npos; pos = reported.find(want, pos + 1)) {
    const std::size_t end = pos + want.size();
    if ((pos == 0 || separator(reported[pos - 1])) && (end == reported.size() || separator(reported[end])))
      return true;
  }
  return false;
}

}  // namespace pollux

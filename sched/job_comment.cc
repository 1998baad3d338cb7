// SPDX-License-Identifier: GPL-2.0-or-later
// SystemComment format (see job_comment.h).
#include "job_comment.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "log_safe.h"

namespace pollux::sched {
namespace {

constexpr std::string_view kSeparator = " | ";

std::string number(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const auto sp = s.find(' ');
    if (sp != 0) out.push_back(s.substr(0, sp));
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  return out;
}

template <typename T>
bool parse_number(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// "NxG@hostlist" or "0".
std::optional<Alloc> parse_alloc(std::string_view s) {
  if (s == "0") return Alloc{};
  const auto x = s.find('x');
  const auto at = s.find('@');
  if (x == std::string_view::npos || at == std::string_view::npos || at < x) return std::nullopt;
  Alloc a;
  if (!parse_number(s.substr(0, x), a.nodes) || !parse_number(s.substr(x + 1, at - x - 1), a.gpus_per_node))
    return std::nullopt;
  a.node_list = std::string(s.substr(at + 1));
  if (a.nodes < 1 || a.gpus_per_node < 1 || a.node_list.empty()) return std::nullopt;
  return a;
}

std::string format_alloc(const Alloc& a) {
  if (a.empty()) return "0";
  // Slurm's node names are printable: escaping changes nothing but keeps a
  // broken name from splitting the comment (never cut: it is state).
  return std::to_string(a.nodes) + "x" + std::to_string(a.gpus_per_node) + "@" +
         log_safe(a.node_list, std::string::npos);
}

// A type name as the comment shows it: Slurm's ("untyped" for untyped
// GPUs); a name with a character that would split the comment's words or
// lists is escaped (log_safe), never cut.
std::string type_word(const std::string& type) {
  if (type.empty()) return std::string(kUntypedGpuType);
  std::string out = log_safe(type, std::string::npos);
  for (char& c : out)
    if (c == ' ' || c == ',' || c == ':' || c == '=' || c == '|') c = '?';
  return out;
}

std::string type_name(std::string_view word) { return word == kUntypedGpuType ? std::string() : std::string(word); }

}  // namespace

std::string slurm_time(double t) {
  const auto secs = static_cast<time_t>(std::ceil(t));
  struct tm tm {};
  char out[32];
  if (localtime_r(&secs, &tm) == nullptr || std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%S", &tm) == 0) return "?";
  return out;
}

std::string format_comment(const JobView& v, const JobState& s) {
  std::string out(kCommentPrefix);
  out += " gpus=" + std::to_string(v.gpus) + " nodes=" + std::to_string(v.nodes);
  if (!v.kind.empty()) out += " kind=" + v.kind;
  if (v.has_model) {
    out += " goodput=" + number(v.goodput, "%.4g") + "/s eff=" + number(v.efficiency, "%.2f") +
           " speedup=" + number(v.speedup, "%.2f") + " bsz=" + std::to_string(v.batch) + "x" +
           std::to_string(v.micro_steps);
    if (v.noise_scale > 0 && std::isfinite(v.noise_scale)) out += " gns=" + number(v.noise_scale, "%.4g");
  } else {
    out += " model=none speedup=" + number(v.speedup, "%.2f");
  }
  if (!v.gpu_type.empty() || !v.goodput_by_type.empty()) {
    if (!v.gpu_type.empty()) out += " type=" + type_word(v.gpu_type);
    std::string list;
    for (const auto& [type, goodput] : v.goodput_by_type)
      list += (list.empty() ? "" : ",") + type_word(type) + ":" + number(goodput, "%.4g");
    if (!list.empty()) out += " goodput_by_type=" + list;
  }
  if (!s.why.empty()) out += " why=" + std::string(s.why.text());
  if (!v.cap.empty()) out += " cap=" + std::string(v.cap.text());
  if (v.start > 0) out += " start=" + slurm_time(v.start);
  out += std::string(kSeparator) + "state=" + phase_name(s.phase) + " range=" + format_range(s.range) +
         " alloc=" + format_alloc(s.alloc);
  if (s.phase == Phase::kCheckpointing && !s.from.empty()) out += " from=" + format_alloc(s.from);
  out += " since=" + std::to_string(static_cast<long long>(s.since)) +
         " submit=" + std::to_string(static_cast<long long>(s.submit));
  if (s.limit > 0) out += " limit=" + std::to_string(s.limit) + " used=" + std::to_string(s.used);
  if (s.limit > 0 && s.run > 0) out += " run=" + std::to_string(static_cast<long long>(s.run));
  return out;
}

std::optional<CommentTypes> parse_comment_types(std::string_view comment) {
  CommentTypes out;
  if (comment.substr(0, kCommentPrefix.size()) != kCommentPrefix) return out;
  const auto sep = comment.find(kSeparator);
  for (std::string_view w : words(comment.substr(kCommentPrefix.size(), sep - kCommentPrefix.size()))) {
    if (w.substr(0, 5) == "type=") {
      if (w.size() == 5) return std::nullopt;
      out.gpu_type = type_name(w.substr(5));
    } else if (w.substr(0, 16) == "goodput_by_type=") {
      std::string_view list = w.substr(16);
      while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string_view item = list.substr(0, comma);
        const auto colon = item.rfind(':');
        double goodput = 0;
        if (colon == 0 || colon == std::string_view::npos) return std::nullopt;
        const std::string value(item.substr(colon + 1));
        char* end = nullptr;
        goodput = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(goodput)) return std::nullopt;
        out.goodput_by_type.emplace_back(type_name(item.substr(0, colon)), goodput);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    }
  }
  return out;
}

Why parse_comment_cap(std::string_view comment) {
  if (comment.substr(0, kCommentPrefix.size()) != kCommentPrefix) return {};
  const auto sep = comment.find(kSeparator);
  for (std::string_view w : words(comment.substr(kCommentPrefix.size(), sep - kCommentPrefix.size())))
    if (w.substr(0, 4) == "cap=") return parse_why(w.substr(4)).value_or(Why());
  return {};
}

long long next_run_limit(const JobState& s) {
  if (s.limit <= 0) return 0;
  const long long left = s.limit * 60 - s.used;
  return left <= 60 ? 1 : (left + 59) / 60;
}

std::optional<JobState> parse_comment(std::string_view comment, std::string* problem) {
  if (problem != nullptr) problem->clear();
  if (comment.substr(0, kCommentPrefix.size()) != kCommentPrefix) return std::nullopt;
  const auto sep = comment.rfind(kSeparator);
  if (sep == std::string_view::npos) return std::nullopt;
  JobState s;
  bool have_phase = false, have_range = false, have_alloc = false, have_since = false;
  for (std::string_view w : words(comment.substr(kCommentPrefix.size()))) {
    const auto eq = w.find('=');
    if (eq == std::string_view::npos) continue;  // the separator
    const std::string_view key = w.substr(0, eq), value = w.substr(eq + 1);
    if (key == "why") {
      const auto why = parse_why(value);
      s.why = why.value_or(Why::kNone);
      if (!why && problem != nullptr)
        *problem = "why=" + log_safe(std::string(value), 64) +
                   " in its SystemComment is no reason sched/pollux writes: read as none";
    } else if (key == "state") {
      const auto phase = parse_phase(value);
      if (!phase) return std::nullopt;
      s.phase = *phase;
      have_phase = true;
    } else if (key == "range") {
      const auto r = parse_range(value);
      if (!r) return std::nullopt;
      s.range = *r;
      have_range = true;
    } else if (key == "alloc") {
      const auto a = parse_alloc(value);
      if (!a) return std::nullopt;
      s.alloc = *a;
      have_alloc = true;
    } else if (key == "from") {
      const auto a = parse_alloc(value);
      if (!a) return std::nullopt;
      s.from = *a;
    } else if (key == "since") {
      long long t = 0;
      if (!parse_number(value, t) || t < 0) return std::nullopt;
      s.since = static_cast<double>(t);
      have_since = true;
    } else if (key == "submit") {
      long long t = 0;
      if (!parse_number(value, t) || t < 0) return std::nullopt;
      s.submit = static_cast<double>(t);
    } else if (key == "limit" || key == "used") {
      long long t = 0;
      if (!parse_number(value, t) || t < 0) return std::nullopt;
      (key == "limit" ? s.limit : s.used) = t;
    } else if (key == "run") {
      long long t = 0;
      if (!parse_number(value, t) || t < 0) return std::nullopt;
      s.run = static_cast<double>(t);
    }  // the view's keys, and keys a newer version may add
  }
  if (!have_phase || !have_range || !have_alloc || !have_since) return std::nullopt;
  if ((s.phase == Phase::kStarting || s.phase == Phase::kRunning || s.phase == Phase::kSuspended) && s.alloc.empty())
    return std::nullopt;
  if (s.phase == Phase::kHeld && !s.alloc.empty()) return std::nullopt;
  if (s.phase != Phase::kCheckpointing) s.from = {};
  return s;
}

}  // namespace pollux::sched

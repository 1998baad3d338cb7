// SPDX-License-Identifier: GPL-2.0-or-later
// The learnt GPU type speeds across restarts (see type_speeds_file.h).
#include "type_speeds_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <tuple>
#include <vector>

#include "sched/log_safe.h"
#include "pollux/atomic_file.h"

namespace pollux::sched {
namespace {

constexpr std::string_view kHeader = "pollux_gpu_type_speeds 1";
constexpr std::size_t kMaxTypes = 256;
constexpr std::size_t kMaxBytes = 4 << 20;
constexpr double kMaxMeanLogRatio = 50;   // |mean log ratio|: e^50 is no GPU pair
constexpr long long kMaxCount = 1 << 30;

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A non-negative decimal integer without sign or leading zero, at most `max`.
std::optional<long long> whole(std::string_view s, long long max) {
  if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  long long v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
    if (v > max) return std::nullopt;
  }
  return v;
}

// A finite decimal number (as format_type_speeds writes them).
std::optional<double> real(std::string_view s) {
  if (s.empty() || s.size() > 40) return std::nullopt;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) return std::nullopt;
  const std::string t(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (errno != 0 || end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto sp = line.find(' ');
    out.push_back(line.substr(0, sp));
    if (sp == std::string_view::npos) return out;
    line.remove_prefix(sp + 1);
  }
}

// One line's record into `out`: empty, or why it is refused.
std::string parse_line(std::string_view line, LearntTypeSpeeds& out) {
  const std::vector<std::string_view> f = split(line);
  const int types = static_cast<int>(out.types.size());
  if (f[0] == "type") {
    if (!out.pairs.empty() || !out.seen.empty()) return "a type after the pairs";
    if (f.size() < 2 || f.size() > 3) return "expected 'type <speed> [<name>]'";
    const auto speed = real(f[1]);
    if (!speed || !(*speed >= kMinGpuTypeSpeed && *speed <= kMaxGpuTypeSpeed))
      return "a type's speed must be in [0.001, 1000], as pollux_gpu_type_speeds'";
    const std::string name(f.size() == 3 ? f[2] : std::string_view());
    if (f.size() == 3 && name.empty()) return "an empty type name";
    for (const char c : name)
      if (c < 0x21 || c > 0x7e) return "a type name must be printable ASCII without spaces";
    if (types > 0 && !(out.types.back() < name)) return "type names must be sorted and distinct";
    if (out.types.size() >= kMaxTypes) return "more than 256 types";
    out.types.push_back(name);
    out.seed.push_back(*speed);
    return {};
  }
  auto index = [&](std::string_view s) -> std::optional<int> {
    const auto v = whole(s, types - 1);
    if (!v) return std::nullopt;
    return static_cast<int>(*v);
  };
  if (types < 2 && (f[0] == "pair" || f[0] == "seen")) return "fewer than 2 types before the pairs";
  if (f[0] == "pair") {
    if (!out.seen.empty()) return "a pair after the seen jobs";
    if (f.size() != 5) return "expected 'pair <a> <b> <count> <log sum>'";
    const auto a = index(f[1]), b = index(f[2]);
    if (!a || !b || *a >= *b) return "a pair must be two type indices a < b";
    const auto count = whole(f[3], kMaxCount);
    if (!count || *count < 1) return "a pair's count must be a whole number in [1, 2^30]";
    const auto sum = real(f[4]);
    if (!sum || std::fabs(*sum) > kMaxMeanLogRatio * static_cast<double>(*count))
      return "a pair's log sum must be finite and at most 50 per observation";
    const LearntTypeSpeeds::Pair p{*a, *b, static_cast<int>(*count), *sum};
    if (!out.pairs.empty() && std::tie(out.pairs.back().a, out.pairs.back().b) >= std::tie(p.a, p.b))
      return "pairs must be sorted and distinct";
    out.pairs.push_back(p);
    return {};
  }
  if (f[0] == "seen") {
    if (f.size() != 4) return "expected 'seen <job id> <a> <b>'";
    const auto job = whole(f[1], UINT32_MAX);
    if (!job || *job < 1) return "a job id must be a whole number in [1, 2^32)";
    const auto a = index(f[2]), b = index(f[3]);
    if (!a || !b || *a >= *b) return "a seen pair must be two type indices a < b";
    const LearntTypeSpeeds::Seen s{static_cast<std::uint32_t>(*job), *a, *b};
    if (!out.seen.empty() && std::tie(out.seen.back().job, out.seen.back().a, out.seen.back().b) >=
                                 std::tie(s.job, s.a, s.b))
      return "seen jobs must be sorted and distinct";
    out.seen.push_back(s);
    return {};
  }
  return "expected a type, pair or seen line";
}

}  // namespace

std::string format_type_speeds(const LearntTypeSpeeds& learnt) {
  std::string out(kHeader);
  out += '\n';
  for (std::size_t t = 0; t < learnt.types.size() && t < learnt.seed.size(); ++t)
    out += "type " + number(learnt.seed[t]) + (learnt.types[t].empty() ? "" : " " + learnt.types[t]) + "\n";
  for (const LearntTypeSpeeds::Pair& p : learnt.pairs)
    out += "pair " + std::to_string(p.a) + " " + std::to_string(p.b) + " " + std::to_string(p.count) + " " +
           number(p.log_sum) + "\n";
  for (const LearntTypeSpeeds::Seen& s : learnt.seen)
    out += "seen " + std::to_string(s.job) + " " + std::to_string(s.a) + " " + std::to_string(s.b) + "\n";
  return out;
}

ParsedTypeSpeeds parse_type_speeds(std::string_view text, const std::string& path) {
  ParsedTypeSpeeds r;
  auto refuse = [&](std::size_t line, const std::string& why) {
    r.learnt = {};
    r.error = log_safe(path + ":" + std::to_string(line) + ": " + why + " (not learnt GPU type speeds: " +
                       "starting from pollux_gpu_type_speeds)");
    return r;
  };
  std::size_t n = 0;
  while (!text.empty()) {
    ++n;
    const auto end = text.find('\n');
    if (end == std::string_view::npos) return refuse(n, "the last line is cut (a damaged file)");
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    if (n == 1) {
      if (line != kHeader) return refuse(n, "expected the header 'pollux_gpu_type_speeds 1'");
      continue;
    }
    const std::string why = parse_line(line, r.learnt);
    if (!why.empty()) return refuse(n, why);
  }
  if (n == 0) return refuse(1, "empty");
  if (r.learnt.types.size() < 2) return refuse(n, "fewer than 2 types");
  return r;
}

ParsedTypeSpeeds read_type_speeds(const std::string& path) noexcept {
  ParsedTypeSpeeds r;
  try {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) {
      r.missing = true;
      r.error = path + ": none yet";
      return r;
    }
    const FileRead f = read_file_checked(path, kMaxBytes, ::geteuid());
    if (!f) {
      r.error = log_safe(f.error);
      return r;
    }
    return parse_type_speeds(f.data, path);
  } catch (const std::exception& e) {
    r.learnt = {};
    r.error = path + ": " + e.what();
    return r;
  }
}

std::string write_type_speeds(const std::string& path, const LearntTypeSpeeds& learnt) noexcept {
  try {
    return write_file_atomic(path, format_type_speeds(learnt), 0600);
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace pollux::sched

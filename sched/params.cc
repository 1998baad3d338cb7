// SPDX-License-Identifier: GPL-2.0-or-later
// SchedulerParameters parsing (see params.h).
#include "params.h"

#include <strings.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <iomanip>
#include <optional>
#include <sstream>

#include "log_safe.h"
#include "pollux/resize_decision.h"

namespace pollux::sched {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// A whole-string number; nullopt for trailing characters, NaN or infinity.
std::optional<double> to_double(std::string_view text) {
  const std::string s(text);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno == ERANGE || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> to_bool(std::string_view text) {
  for (const char* yes : {"yes", "true", "on", "1"})
    if (iequals(text, yes)) return true;
  for (const char* no : {"no", "false", "off", "0"})
    if (iequals(text, no)) return false;
  return std::nullopt;
}

std::string range_text(double lo, double hi) {
  std::ostringstream o;
  o << "[" << lo << ", " << hi << "]";
  return o.str();
}

// How one type of value is read and shown: parse returns "" or why the
// text is refused (leaving the value untouched).
template <typename T>
struct Rule {
  std::function<std::string(std::string_view, T&)> parse;
  std::function<std::string(const T&)> format;
};

std::string plain(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

Rule<double> number(double lo, double hi) {
  return {[=](std::string_view value, double& out) -> std::string {
            const auto v = to_double(value);
            if (!v || *v < lo || *v > hi) return "must be a number in " + range_text(lo, hi);
            out = *v;
            return {};
          },
          plain};
}

template <typename Int>
Rule<Int> integer(long long lo, long long hi) {
  return {[=](std::string_view value, Int& out) -> std::string {
            const auto v = to_double(value);
            if (!v || *v != std::floor(*v) || *v < lo || *v > hi)
              return "must be an integer in " + range_text(static_cast<double>(lo), static_cast<double>(hi));
            out = static_cast<Int>(*v);
            return {};
          },
          [](const Int& v) { return std::to_string(v); }};
}

Rule<bool> yes_no() {
  return {[](std::string_view value, bool& out) -> std::string {
            const auto v = to_bool(value);
            if (!v) return "must be yes or no";
            out = *v;
            return {};
          },
          [](const bool& v) { return std::string(v ? "yes" : "no"); }};
}

// An absolute path without '..' or control characters.
Rule<std::string> path() {
  return {[](std::string_view value, std::string& out) -> std::string {
            if (value.empty() || value.front() != '/') return "must be an absolute path";
            if (value.size() > 1024) return "is longer than 1024 characters";
            if (value == "/") return "must not be the root directory";
            const std::string v(value);
            if (v.find("/../") != std::string::npos || (v.size() >= 3 && v.compare(v.size() - 3, 3, "/..") == 0))
              return "must not contain '..'";
            for (unsigned char c : v)
              if (c < 0x20 || c == 0x7f) return "must not contain control characters";
            out = v;
            return {};
          },
          [](const std::string& v) { return v; }};
}

// "USR1:USR2:40": signals by name or number, ':'-separated (',' separates
// SchedulerParameters); kept as a mask, bit n - 1 for signal n.
Rule<unsigned long long> signals() {
  return {[](std::string_view value, unsigned long long& out) -> std::string {
            unsigned long long mask = 0;
            for (;;) {
              const auto colon = value.find(':');
              const int sig = signal_number(value.substr(0, colon));
              if (sig == 0) return "must be signal names or numbers (1-64, not KILL or STOP) separated by ':'";
              mask |= 1ULL << (sig - 1);
              if (colon == std::string_view::npos) break;
              value.remove_prefix(colon + 1);
            }
            out = mask;
            return {};
          },
          [](const unsigned long long& mask) {
            std::string out;
            for (int sig = 1; sig <= 64; ++sig)
              if ((mask >> (sig - 1)) & 1ULL) out += (out.empty() ? "" : ":") + signal_name(sig);
            return out;
          }};
}

// "a100=1:h100=2.5": GPU type names (Slurm's GRES types) and their
// relative speeds, ':'-separated (',' separates SchedulerParameters).
Rule<GpuTypeSpeeds> type_speeds() {
  return {[](std::string_view value, GpuTypeSpeeds& out) -> std::string {
            const char* form = "must be TYPE=SPEED pairs separated by ':' (speeds in [0.001, 1000])";
            GpuTypeSpeeds speeds;
            for (;;) {
              const auto colon = value.find(':');
              const std::string_view pair = value.substr(0, colon);
              const auto eq = pair.find('=');
              if (eq == 0 || eq == std::string_view::npos) return form;
              const std::string_view name = pair.substr(0, eq);
              for (const char c : name)
                if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' && c != '+')
                  return form;
              const auto speed = to_double(pair.substr(eq + 1));
              if (!speed || !(*speed >= kMinGpuTypeSpeed && *speed <= kMaxGpuTypeSpeed)) return form;
              speeds[std::string(name)] = *speed;
              if (colon == std::string_view::npos) break;
              value.remove_prefix(colon + 1);
            }
            out = std::move(speeds);
            return {};
          },
          [](const GpuTypeSpeeds& speeds) {
            std::string out;
            for (const auto& [name, speed] : speeds) out += (out.empty() ? "" : ":") + name + "=" + plain(speed);
            return out;
          }};
}

Rule<AutoscaleMode> autoscale_mode() {
  return {[](std::string_view value, AutoscaleMode& out) -> std::string {
            if (iequals(value, "off")) out = AutoscaleMode::kOff;
            else if (iequals(value, "goodput")) out = AutoscaleMode::kGoodput;
            else return "must be off or goodput";
            return {};
          },
          [](const AutoscaleMode& m) { return std::string(m == AutoscaleMode::kGoodput ? "goodput" : "off"); }};
}

// "0.35:0.65": the utility band of goodput auto-scaling, MIN < MAX in [0, 1].
Rule<UtilityBand> utility_band() {
  return {[](std::string_view value, UtilityBand& out) -> std::string {
            const char* form = "must be MIN:MAX with 0 <= MIN < MAX <= 1";
            const auto colon = value.find(':');
            if (colon == std::string_view::npos) return form;
            const auto lo = to_double(value.substr(0, colon)), hi = to_double(value.substr(colon + 1));
            if (!lo || !hi || *lo < 0 || *hi > 1 || !(*lo < *hi)) return form;
            out.min = *lo;
            out.max = *hi;
            return {};
          },
          [](const UtilityBand& b) { return plain(b.min) + ":" + plain(b.max); }};
}

constexpr bool kPolicy = true;   // a change rebuilds the policy
constexpr bool kPlugin = false;  // read by the plugin alone (the restart penalty: through the job descriptions)

template <typename T>
ParameterRow row(const char* name, T Params::*field, Rule<T> rule, const char* default_text, bool policy,
                 const char* description) {
  return {name,
          default_text,
          description,
          policy,
          [field, parse = std::move(rule.parse)](std::string_view value, Params& p) {
            T v{};
            std::string why = parse(value, v);
            if (why.empty()) p.*field = std::move(v);
            return why;
          },
          [field, format = std::move(rule.format)](const Params& p) { return format(p.*field); },
          [field](const Params& a, const Params& b) { return a.*field == b.*field; }};
}

}  // namespace

const std::vector<ParameterRow>& parameter_table() {
  static const std::vector<ParameterRow> table = {
      row("pollux_interval", &Params::interval, number(1, 86400), "60", kPlugin, "seconds between periodic rounds"),
      row("pollux_fairness", &Params::fairness_p, number(-10, 1), "-1", kPolicy,
          "the power-mean exponent p of the policy's fairness"),
      row("pollux_restart_penalty", &Params::restart_penalty, number(0, 86400), "30", kPlugin,
          "D: the seconds a resize costs a job"),
      row("pollux_interference_avoidance", &Params::interference_avoidance, yes_no(), "yes", kPolicy,
          "at most one distributed job per node"),
      row("pollux_max_nodes", &Params::max_nodes_per_job, integer<int>(1, 100000), "16", kPolicy,
          "the most nodes the policy gives a job"),
      row(kSpoolDirParameter, &Params::spool_dir, path(), kDefaultSpoolDir, kPlugin,
          "the directory of the agents' hints and resize requests"),
      row("pollux_checkpoint_timeout", &Params::checkpoint_timeout, number(1, 86400), "120", kPlugin,
          "seconds a job's agent has to checkpoint for a resize"),
      row("pollux_search_budget", &Params::search_budget, integer<long long>(0, 1000000000), "0", kPolicy,
          "fitness evaluations per round (0: the policy's default)"),
      row("pollux_backfill", &Params::backfill, yes_no(), "yes", kPlugin, "Slurm's backfill for rigid jobs"),
      row("pollux_resize_signals", &Params::resize_signals, signals(), "USR1:USR2", kPlugin,
          "the signals an agent may announce for its resize requests"),
      row("pollux_metrics_file", &Params::metrics_file, path(), nullptr, kPlugin,
          "the Prometheus text file written each round"),
      row("pollux_gpu_type_speeds", &Params::gpu_type_speeds, type_speeds(), nullptr, kPlugin,
          "relative speeds of the GPU types (TYPE=SPEED:...), the seed of the per-type model"),
      row("pollux_autoscale", &Params::autoscale, autoscale_mode(), "off", kPlugin,
          "goodput: power down nodes the jobs' utility does not need (Slurm's power saving)"),
      row("pollux_utility_band", &Params::utility_band, utility_band(), "0.35:0.65", kPlugin,
          "MIN:MAX, the cluster utility goodput auto-scaling keeps to"),
  };
  return table;
}

// Each field from its row's default; a row without one leaves the field empty.
Params::Params() {
  for (const ParameterRow& r : parameter_table())
    if (r.default_text != nullptr) r.parse(r.default_text, *this);
}

bool Params::operator==(const Params& o) const noexcept {
  for (const ParameterRow& r : parameter_table())
    if (!r.same(*this, o)) return false;
  return true;
}

bool policy_changed(const Params& a, const Params& b) {
  for (const ParameterRow& r : parameter_table())
    if (r.policy && !r.same(a, b)) return true;
  return false;
}

ParamsResult parse_params(std::string_view text) {
  ParamsResult result;
  // Per option: the occurrence that holds (its text) and how many were given.
  std::map<const ParameterRow*, std::pair<std::string, int>> given;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    const auto eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    if (key.size() < 7 || !iequals(key.substr(0, 7), "pollux_")) continue;  // Slurm's own options
    const ParameterRow* option = nullptr;
    for (const ParameterRow& r : parameter_table())
      if (iequals(key, r.name)) option = &r;
    if (option == nullptr) {
      result.errors.push_back(log_safe("unknown option " + std::string(item) + " ignored"));
      continue;
    }
    auto& [holding, count] = given[option];
    ++count;
    // What stays when this occurrence is refused: an earlier valid one, or the default.
    const std::string kept = holding.empty() ? "default kept" : holding + " (given earlier) kept";
    if (eq == std::string_view::npos) {
      result.errors.push_back(log_safe(std::string(option->name) + " has no value (" + option->name + "=VALUE): " +
                                       kept));
      continue;
    }
    const std::string_view value = item.substr(eq + 1);
    Params candidate = result.params;
    const std::string why = option->parse(value, candidate);
    if (why.empty()) {
      result.params = candidate;
      holding = std::string(option->name) + "=" + std::string(value);
    } else {
      result.errors.push_back(log_safe(std::string(option->name) + "=" + std::string(value) + " " + why + ": " + kept));
    }
  }
  // A key given twice: the last valid one wins, as with Slurm's own repeated keys; say so.
  for (const auto& [option, g] : given)
    if (g.second > 1)
      result.notes.push_back(log_safe(std::string(option->name) + " given " + std::to_string(g.second) +
                                      " times: the last valid one wins: " +
                                      (g.first.empty() ? std::string("none, default kept") : g.first)));
  return result;
}

std::string describe(const Params& p) {
  std::string out;
  for (const ParameterRow& r : parameter_table()) {
    const std::string value = r.format(p);
    if (r.default_text == nullptr && value.empty()) continue;  // unset, and not set
    out += (out.empty() ? "" : " ") + std::string(r.name) + "=" + value;
  }
  return out;
}

PolicyOptions policy_options(const Params& p) {
  PolicyOptions o;
  o.fairness_p = p.fairness_p;
  o.interference_avoidance = p.interference_avoidance;
  o.max_nodes_per_job = p.max_nodes_per_job;
  o.uniform_gpus_per_node = true;
  o.search_budget = p.search_budget;
  return o;
}

}  // namespace pollux::sched

// SPDX-License-Identifier: GPL-2.0-or-later
// SchedulerParameters parsing (see params.h).
#include "params.h"

#include <strings.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <iomanip>
#include <optional>
#include <sstream>

#include "log_safe.h"

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

// One option: its name and how it is stored; each returns "" or the reason.
struct Option {
  const char* name;
  std::function<std::string(std::string_view value, Params& p)> set;
};

std::function<std::string(std::string_view, Params&)> number(double Params::*field, double lo, double hi) {
  return [=](std::string_view value, Params& p) -> std::string {
    const auto v = to_double(value);
    if (!v || *v < lo || *v > hi) return "must be a number in " + range_text(lo, hi);
    p.*field = *v;
    return {};
  };
}

template <typename Int>
std::function<std::string(std::string_view, Params&)> integer(Int Params::*field, long long lo, long long hi) {
  return [=](std::string_view value, Params& p) -> std::string {
    const auto v = to_double(value);
    if (!v || *v != std::floor(*v) || *v < lo || *v > hi)
      return "must be an integer in " + range_text(static_cast<double>(lo), static_cast<double>(hi));
    p.*field = static_cast<Int>(*v);
    return {};
  };
}

std::function<std::string(std::string_view, Params&)> boolean(bool Params::*field) {
  return [=](std::string_view value, Params& p) -> std::string {
    const auto v = to_bool(value);
    if (!v) return "must be yes or no";
    p.*field = *v;
    return {};
  };
}

// An absolute path without '..' or control characters.
std::function<std::string(std::string_view, Params&)> path(std::string Params::*field) {
  return [=](std::string_view value, Params& p) -> std::string {
    if (value.empty() || value.front() != '/') return "must be an absolute path";
    if (value.size() > 1024) return "is longer than 1024 characters";
    if (value == "/") return "must not be the root directory";
    const std::string v(value);
    if (v.find("/../") != std::string::npos || (v.size() >= 3 && v.compare(v.size() - 3, 3, "/..") == 0))
      return "must not contain '..'";
    for (unsigned char c : v)
      if (c < 0x20 || c == 0x7f) return "must not contain control characters";
    p.*field = v;
    return {};
  };
}

const std::vector<Option>& options() {
  static const std::vector<Option> table = {
      {"pollux_interval", number(&Params::interval, 1, 86400)},
      {"pollux_fairness", number(&Params::fairness_p, -10, 1)},
      {"pollux_restart_penalty", number(&Params::restart_penalty, 0, 86400)},
      {"pollux_interference_avoidance", boolean(&Params::interference_avoidance)},
      {"pollux_max_nodes", integer(&Params::max_nodes_per_job, 1, 100000)},
      {kSpoolDirParameter, path(&Params::spool_dir)},
      {"pollux_metrics_file", path(&Params::metrics_file)},
      {"pollux_checkpoint_timeout", number(&Params::checkpoint_timeout, 1, 86400)},
      {"pollux_search_budget", integer(&Params::search_budget, 0, 1000000000)},
      {"pollux_backfill", boolean(&Params::backfill)},
  };
  return table;
}

}  // namespace

bool Params::operator==(const Params& o) const noexcept {
  return interval == o.interval && fairness_p == o.fairness_p && restart_penalty == o.restart_penalty &&
         interference_avoidance == o.interference_avoidance && max_nodes_per_job == o.max_nodes_per_job &&
         spool_dir == o.spool_dir && checkpoint_timeout == o.checkpoint_timeout &&
         search_budget == o.search_budget && backfill == o.backfill && metrics_file == o.metrics_file;
}

ParamsResult parse_params(std::string_view text) {
  ParamsResult result;
  // Per option: the occurrence that holds (its text) and how many were given.
  std::map<const Option*, std::pair<std::string, int>> given;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    const auto eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    if (key.size() < 7 || !iequals(key.substr(0, 7), "pollux_")) continue;  // Slurm's own options
    const Option* option = nullptr;
    for (const Option& o : options())
      if (iequals(key, o.name)) option = &o;
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
    const std::string why = option->set(value, candidate);
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
  std::ostringstream o;
  o << std::boolalpha << "pollux_interval=" << p.interval << " pollux_fairness=" << p.fairness_p
    << " pollux_restart_penalty=" << p.restart_penalty
    << " pollux_interference_avoidance=" << (p.interference_avoidance ? "yes" : "no")
    << " pollux_max_nodes=" << p.max_nodes_per_job << " pollux_spool_dir=" << p.spool_dir
    << " pollux_checkpoint_timeout=" << p.checkpoint_timeout << " pollux_search_budget=" << p.search_budget
    << " pollux_backfill=" << (p.backfill ? "yes" : "no");
  if (!p.metrics_file.empty()) o << " pollux_metrics_file=" << p.metrics_file;
  return o.str();
}

PolicyOptions policy_options(const Params& p) {
  PolicyOptions o;
  o.fairness_p = p.fairness_p;
  o.restart_delay = p.restart_penalty;
  o.interval = p.interval;
  o.interference_avoidance = p.interference_avoidance;
  o.max_nodes_per_job = p.max_nodes_per_job;
  o.uniform_gpus_per_node = true;
  o.search_budget = p.search_budget;
  return o;
}

}  // namespace pollux::sched

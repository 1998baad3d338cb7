// SPDX-License-Identifier: GPL-2.0-or-later
// Elastic job classification (see elastic.h).
#include "elastic.h"

#include <charconv>

namespace pollux::sched {
namespace {

std::optional<int> to_int(std::string_view s, int lo, int hi) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

bool set(const std::string& s) { return !s.empty(); }

}  // namespace

bool asks_beyond_cpus(std::string_view tres) {
  while (!tres.empty()) {
    const auto comma = tres.find(',');
    const std::string_view entry = tres.substr(0, comma);
    if (!entry.empty() && entry.substr(0, 4) != "cpu=" && entry.substr(0, 4) != "cpu:") return true;
    if (comma == std::string_view::npos) break;
    tres.remove_prefix(comma + 1);
  }
  return false;
}

bool ElasticRange::allows(int nodes, int g) const noexcept {
  return nodes >= min_nodes && nodes <= max_nodes && g >= 1 && g <= gpus_per_node;
}

std::string format_range(const ElasticRange& r) {
  return std::to_string(r.min_nodes) + "-" + std::to_string(r.max_nodes) + "x" + std::to_string(r.gpus_per_node);
}

std::optional<ElasticRange> parse_range(std::string_view text) {
  const auto dash = text.find('-');
  const auto x = text.find('x');
  if (dash == std::string_view::npos || x == std::string_view::npos || x < dash) return std::nullopt;
  const auto lo = to_int(text.substr(0, dash), 1, kMaxNodes);
  const auto hi = to_int(text.substr(dash + 1, x - dash - 1), 1, kMaxNodes);
  const auto g = to_int(text.substr(x + 1), 1, 1024);
  if (!lo || !hi || !g || *lo > *hi) return std::nullopt;
  return ElasticRange{*lo, *hi, *g};
}

std::optional<int> untyped_gpus_per_node(std::string_view tres) {
  const auto g = gpus_in_tres(tres);
  if (!g || !g->type.empty()) return std::nullopt;
  return g->gpus;
}

std::optional<GpuCount> gpus_in_tres(std::string_view tres) {
  for (std::string_view prefix : {"gres:gpu:", "gres/gpu:", "gpu:"}) {
    if (tres.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = tres.substr(prefix.size());
    GpuCount out;
    const auto colon = rest.rfind(':');
    if (colon != std::string_view::npos) {
      out.type = std::string(rest.substr(0, colon));
      if (out.type.empty() || out.type.find_first_of(":,=") != std::string::npos) return std::nullopt;
      rest.remove_prefix(colon + 1);
    }
    const auto g = to_int(rest, 1, 1024);
    if (!g) return std::nullopt;
    out.gpus = *g;
    return out;
  }
  return std::nullopt;
}

std::optional<ElasticRange> updated_range(const ElasticRange& now, unsigned min_nodes, unsigned max_nodes,
                                          std::string_view tres_per_node, std::string* why) {
  auto refuse = [why](const char* reason) -> std::optional<ElasticRange> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  auto given = [](unsigned n) { return n >= 1 && n <= kMaxNodes; };
  ElasticRange r = now;
  if (given(min_nodes)) r.min_nodes = static_cast<int>(min_nodes);
  if (given(max_nodes)) r.max_nodes = static_cast<int>(max_nodes);
  else if (r.max_nodes < r.min_nodes) r.max_nodes = r.min_nodes;
  if (!tres_per_node.empty()) {
    const auto g = untyped_gpus_per_node(tres_per_node);
    if (!g) return refuse("an elastic job's GPUs per node must be untyped GPUs alone (gres:gpu:G)");
    r.gpus_per_node = *g;
  }
  if (r.min_nodes > r.max_nodes) return refuse("the node range is reversed (MIN > MAX)");
  return r;
}

std::optional<ElasticRange> classify(const JobShape& s, std::string* why) {
  auto rigid = [why](const char* reason) -> std::optional<ElasticRange> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  if (!s.batch) return rigid("not a batch job");
  if (!s.requeue) return rigid("not requeueable (--requeue)");
  if (s.array) return rigid("a job array");
  if (s.heterogeneous) return rigid("a heterogeneous job");
  const bool have_min = s.min_nodes >= 1 && s.min_nodes <= kMaxNodes;
  const bool have_max = s.max_nodes >= 1 && s.max_nodes <= kMaxNodes;
  if (!have_min || !have_max || s.max_nodes <= s.min_nodes) return rigid("no node range (-N MIN-MAX)");
  if (set(s.tres_per_job) || set(s.tres_per_socket) || asks_beyond_cpus(s.tres_per_task))
    return rigid("GPUs requested per job, socket or task (use --gpus-per-node)");
  if (s.node_list) return rigid("--nodelist fixes its nodes (sched/pollux places elastic jobs; use --exclude or a partition)");
  if (s.exclusive) return rigid("--exclusive (Slurm grants whole nodes; sched/pollux shares nodes by the GPU)");
  const auto g = untyped_gpus_per_node(s.tres_per_node);
  if (!g) return rigid("no untyped --gpus-per-node=G (or --gres=gpu:G) alone");
  return ElasticRange{static_cast<int>(s.min_nodes), static_cast<int>(s.max_nodes), *g};
}

}  // namespace pollux::sched

// Shared policy helpers (see policy_common.h).
#include "policy_common.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace pollux::detail {
namespace {

[[noreturn]] void fail(std::string_view policy, const std::string& what) {
  throw std::invalid_argument(std::string(policy) + ": " + what);
}

std::string job_name(const std::vector<JobInfo>& jobs, std::size_t i) {
  return "job " + std::to_string(jobs[i].id) + " (index " + std::to_string(i) + ")";
}

// Whether `p` fits in `free` and, when `uniform`, is uniform across nodes.
bool fits_free(const Placement& p, const std::vector<int>& free, bool uniform) {
  for (const NodeShare& s : p)
    if (s.gpus > free[s.node] || (uniform && s.gpus != p.front().gpus)) return false;
  return true;
}

}  // namespace

void validate_round(std::string_view policy, const std::vector<JobInfo>& jobs,
                    const std::vector<NodeInfo>& nodes, const std::vector<Placement>& current) {
  if (current.size() != jobs.size())
    fail(policy, "current allocation has " + std::to_string(current.size()) + " entries for " +
                     std::to_string(jobs.size()) + " jobs");
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].gpus < 0) fail(policy, "node " + std::to_string(n) + " has a negative GPU count");
    if (nodes[n].type < 0) fail(policy, "node " + std::to_string(n) + " has a negative GPU type");
  }
  std::unordered_set<std::uint64_t> ids;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& j = jobs[i];
    if (!ids.insert(j.id).second) fail(policy, "duplicate job id " + std::to_string(j.id));
    if (!std::isfinite(j.submit_time) || !std::isfinite(j.age) || j.age < 0 ||
        !std::isfinite(j.attained_service) || j.attained_service < 0 || j.restarts < 0 ||
        !std::isfinite(j.restart_delay) || j.restart_delay < 0 ||
        !std::isfinite(j.time_limit) || j.time_limit < 0 || !std::isfinite(j.run_time) || j.run_time < 0 ||
        j.min_replicas < 0 || j.max_replicas < 0 || !std::isfinite(j.remaining_iterations))
      fail(policy, job_name(jobs, i) + " has a negative or non-finite field");
    if (j.max_nodes < 0) fail(policy, job_name(jobs, i) + " has a negative max_nodes");
    if (j.min_nodes < 0) fail(policy, job_name(jobs, i) + " has a negative min_nodes");
    if (!j.allowed_nodes.empty() && j.allowed_nodes.size() != nodes.size())
      fail(policy, job_name(jobs, i) + " has allowed_nodes for " + std::to_string(j.allowed_nodes.size()) +
                       " nodes, not " + std::to_string(nodes.size()));
    for (const NodeShare& s : current[i]) {
      if (s.node < 0 || s.node >= static_cast<int>(nodes.size()))
        fail(policy, job_name(jobs, i) + " is placed on node " + std::to_string(s.node) +
                         " outside [0, " + std::to_string(nodes.size()) + ")");
      if (s.gpus < 0) fail(policy, job_name(jobs, i) + " has a negative GPU count on node " + std::to_string(s.node));
    }
  }
}

void validate_options(const PolicyOptions& o) {
  static_assert(kMinFairnessP == -50 && kMaxFairnessP == 50, "update the message below");
  const char* what = nullptr;
  if (!(o.fairness_p >= kMinFairnessP && o.fairness_p <= kMaxFairnessP)) what = "fairness_p must be in [-50, 50]";
  else if (o.max_nodes_per_job < 1) what = "max_nodes_per_job must be >= 1";
  else if (o.population < 2) what = "population must be >= 2";
  else if (o.generations < 0) what = "generations must be >= 0";
  else if (o.search_budget < 0) what = "search_budget must be >= 0";
  else if (!std::isfinite(o.tiresias_queue_threshold) || o.tiresias_queue_threshold < 0)
    what = "tiresias_queue_threshold must be >= 0";
  if (what != nullptr) throw std::invalid_argument(std::string("policy options: ") + what);
}

std::vector<Placement> normalized(const std::vector<Placement>& current) {
  std::vector<Placement> out;
  out.reserve(current.size());
  for (const Placement& p : current) out.push_back(normalize_placement(p));
  return out;
}

std::vector<int> fifo_order(const std::vector<JobInfo>& jobs) {
  std::vector<int> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (jobs[a].submit_time != jobs[b].submit_time) return jobs[a].submit_time < jobs[b].submit_time;
    return jobs[a].id < jobs[b].id;
  });
  return order;
}

Placement place_most_free(std::vector<int>& free, int gpus, bool uniform) {
  Placement out;
  if (gpus <= 0) return out;
  const int n = static_cast<int>(free.size());
  const int most = n == 0 ? 0 : *std::max_element(free.begin(), free.end());
  if (uniform && gpus > most) {
    // Nodes by free GPUs, most first (stable: lowest index on ties).
    std::vector<int> byfree(n);
    std::iota(byfree.begin(), byfree.end(), 0);
    std::stable_sort(byfree.begin(), byfree.end(), [&](int a, int b) { return free[a] > free[b]; });
    for (int k = 2; k <= n && k <= gpus; ++k) {
      if (gpus % k != 0 || free[byfree[k - 1]] < gpus / k) continue;
      for (int i = 0; i < k; ++i) out.push_back({byfree[i], gpus / k});
      break;
    }
  } else {
    for (int left = gpus; left > 0;) {
      const int v = static_cast<int>(std::max_element(free.begin(), free.end()) - free.begin());
      if (n == 0 || free[v] == 0) {
        for (const NodeShare& s : out) free[s.node] += s.gpus;  // give back
        return {};
      }
      const int take = std::min(left, free[v]);
      out.push_back({v, take});
      free[v] -= take;
      left -= take;
    }
    return normalize_placement(std::move(out));
  }
  for (const NodeShare& s : out) free[s.node] -= s.gpus;
  return normalize_placement(std::move(out));
}

std::vector<Placement> keep_or_place(const std::vector<NodeInfo>& nodes, const std::vector<Placement>& current,
                                     const std::vector<int>& size, const std::vector<int>& smallest,
                                     const std::vector<int>& order, const std::vector<int>& place_order,
                                     bool uniform) {
  std::vector<Placement> out(size.size());
  std::vector<int> free(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) free[n] = nodes[n].gpus;
  for (int i : order)
    if (size[i] > 0 && placement_gpus(current[i]) == size[i] && fits_free(current[i], free, uniform)) {
      out[i] = current[i];
      for (const NodeShare& s : out[i]) free[s.node] -= s.gpus;
    }
  for (int i : place_order)
    for (int r = size[i]; r > 0 && r >= smallest[i] && out[i].empty(); --r) out[i] = place_most_free(free, r, uniform);
  return out;
}

}  // namespace pollux::detail

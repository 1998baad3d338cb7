// Goodput auto-scaling (see pollux/autoscale.h).
#include "pollux/autoscale.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace pollux {

double cluster_utility(const std::vector<JobInfo>& jobs, const std::vector<Placement>& alloc, int gpus) {
  if (gpus <= 0) return 0;
  double speedups = 0;
  for (std::size_t j = 0; j < jobs.size() && j < alloc.size(); ++j) {
    const int r = placement_gpus(alloc[j]);
    if (r == 0) continue;
    const int nodes = static_cast<int>(alloc[j].size());
    speedups += jobs[j].speedup ? jobs[j].speedup(nodes, r) : r;
  }
  return speedups / gpus;
}

namespace {

// A job's speedup on r GPUs packed onto the fewest nodes it may run on
// (at least its min_nodes: packed tighter, a job that must span two nodes
// was worth nothing, and the band then asked for every node).
double packed_speedup(const JobInfo& job, int r, int gpus_per_node) {
  if (r <= 0) return 0;
  const int nodes = std::min(r, std::max((r + gpus_per_node - 1) / gpus_per_node, job.min_nodes));
  return job.speedup ? job.speedup(nodes, r) : r;
}

// best[g] = the best summed speedup found on g GPUs, g = 0..max_gpus.
std::vector<double> best_speedups(const std::vector<JobInfo>& jobs, int max_gpus, int gpus_per_node) {
  // Each job's curve, computed once: curve[j][r] for r = 0..its limit.
  std::vector<std::vector<double>> curve(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j)
    for (int r = 0; r <= std::min(jobs[j].max_replicas, max_gpus); ++r)
      curve[j].push_back(packed_speedup(jobs[j], r, gpus_per_node));
  std::vector<int> held(jobs.size(), 0);
  std::vector<double> best(static_cast<std::size_t>(max_gpus) + 1, 0.0);
  int g = 0;
  double total = 0;
  while (g < max_gpus) {
    // The step with the most gain per GPU, over every job and step length.
    std::size_t pick = jobs.size();
    int pick_k = 0;
    double pick_rate = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const std::size_t h = static_cast<std::size_t>(held[j]);
      const int room = std::min({static_cast<int>(curve[j].size()) - 1 - held[j], gpus_per_node, max_gpus - g});
      for (int k = 1; k <= room; ++k) {
        const double rate = (curve[j][h + static_cast<std::size_t>(k)] - curve[j][h]) / k;
        if (rate > pick_rate + 1e-12) {
          pick = j;
          pick_k = k;
          pick_rate = rate;
        }
      }
    }
    if (pick == jobs.size()) break;  // nothing gains: more GPUs add nothing
    for (int k = 1; k <= pick_k; ++k) best[static_cast<std::size_t>(g + k)] = total + pick_rate * k;
    held[pick] += pick_k;
    total = best[static_cast<std::size_t>(g + pick_k)];
    g += pick_k;
  }
  for (++g; g <= max_gpus; ++g) best[static_cast<std::size_t>(g)] = total;
  return best;
}

}  // namespace

int desired_nodes(const std::vector<JobInfo>& jobs, int current, int max_nodes, int gpus_per_node,
                  const UtilityBand& o) {
  if (jobs.empty() || max_nodes <= 0 || gpus_per_node <= 0) return 0;
  const std::vector<double> best = best_speedups(jobs, max_nodes * gpus_per_node, gpus_per_node);
  auto utility = [&](int n) {
    return best[static_cast<std::size_t>(n * gpus_per_node)] / (n * gpus_per_node);
  };
  if (current >= 1 && current <= max_nodes && utility(current) >= o.min && utility(current) <= o.max)
    return current;
  const double target = (o.min + o.max) / 2;
  int pick = 1;
  for (int n = 2; n <= max_nodes; ++n)
    if (std::abs(utility(n) - target) <= std::abs(utility(pick) - target) + 1e-12) pick = n;
  return pick;
}

int nodes_to_keep_running(const std::vector<JobInfo>& jobs, const std::vector<Placement>& alloc, int gpus_per_node) {
  if (gpus_per_node <= 0) return 0;
  int whole = 0;            // nodes taken whole by minimums beyond one node
  std::vector<int> shares;  // minimums that fit on one node
  for (std::size_t j = 0; j < jobs.size() && j < alloc.size(); ++j) {
    if (placement_gpus(alloc[j]) == 0) continue;
    const int gpus = std::max(jobs[j].min_replicas, 1), nodes = std::max(jobs[j].min_nodes, 1);
    if (nodes == 1 && gpus <= gpus_per_node) {
      shares.push_back(gpus);
    } else {
      const int per_node = (gpus + nodes - 1) / nodes;
      whole += per_node <= gpus_per_node ? nodes : (gpus + gpus_per_node - 1) / gpus_per_node;
    }
  }
  std::sort(shares.begin(), shares.end(), std::greater<int>());
  std::vector<int> room;  // free GPUs of each node opened for the shares
  for (int g : shares) {
    auto it = std::find_if(room.begin(), room.end(), [g](int r) { return r >= g; });
    if (it == room.end()) room.push_back(gpus_per_node - g);
    else *it -= g;
  }
  return whole + static_cast<int>(room.size());
}

AutoscaleTarget autoscale_target(const std::vector<JobInfo>& jobs, const std::vector<Placement>& alloc, int current,
                                 int max_nodes, int gpus_per_node, const UtilityBand& band) {
  AutoscaleTarget t;
  t.band = desired_nodes(jobs, current, max_nodes, gpus_per_node, band);
  t.floor = nodes_to_keep_running(jobs, alloc, gpus_per_node);
  t.nodes = std::min(std::max(t.band, t.floor), std::max(max_nodes, 0));
  return t;
}

}  // namespace pollux

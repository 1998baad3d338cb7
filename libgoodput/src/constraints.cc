// check_allocation (see pollux/policy.h): the constraints every policy's
// output must satisfy, checked independently of any search.
#include <algorithm>
#include <string>

#include "pollux/interference.h"
#include "pollux/policy.h"

namespace pollux {
namespace {

std::string job_name(const std::vector<JobInfo>& jobs, std::size_t i) {
  return "job " + std::to_string(jobs[i].id) + " (index " + std::to_string(i) + ")";
}

// The per-job rules; empty when the placement is fine.
std::string check_job(const std::vector<JobInfo>& jobs, std::size_t i, const Placement& p,
                      const std::vector<NodeInfo>& nodes, const PolicyOptions& options) {
  const int num_nodes = static_cast<int>(nodes.size());
  const std::string name = job_name(jobs, i);
  for (std::size_t k = 0; k < p.size(); ++k) {
    const NodeShare& s = p[k];
    if (s.node < 0 || s.node >= num_nodes)
      return name + ": node " + std::to_string(s.node) + " outside [0, " + std::to_string(num_nodes) + ")";
    if (s.gpus <= 0) return name + ": placement not normalized (" + std::to_string(s.gpus) + " GPUs on node " +
                            std::to_string(s.node) + ")";
    if (k > 0 && p[k - 1].node >= s.node)
      return name + ": placement not normalized (nodes not strictly increasing at node " + std::to_string(s.node) + ")";
  }
  const int gpus = placement_gpus(p);
  const JobInfo& job = jobs[i];
  if (gpus > job.max_replicas)
    return name + ": " + std::to_string(gpus) + " GPUs exceed max_replicas " + std::to_string(job.max_replicas);
  if (gpus > 0 && gpus < job.min_replicas)
    return name + ": " + std::to_string(gpus) + " GPUs are below min_replicas " + std::to_string(job.min_replicas);
  for (const NodeShare& s : p)
    if (!job.allowed_nodes.empty() &&
        (static_cast<std::size_t>(s.node) >= job.allowed_nodes.size() || !job.allowed_nodes[static_cast<std::size_t>(s.node)]))
      return name + ": placed on node " + std::to_string(s.node) + ", which it may not use (allowed_nodes)";
  if (gpus > 0 && static_cast<int>(p.size()) < job.min_nodes)
    return name + ": uses " + std::to_string(p.size()) + " nodes, fewer than its min_nodes " +
           std::to_string(job.min_nodes);
  if (job.max_nodes > 0 && static_cast<int>(p.size()) > job.max_nodes)
    return name + ": uses " + std::to_string(p.size()) + " nodes, more than its max_nodes " +
           std::to_string(job.max_nodes);
  if (static_cast<int>(p.size()) > options.max_nodes_per_job)
    return name + ": uses " + std::to_string(p.size()) + " nodes, more than max_nodes_per_job " +
           std::to_string(options.max_nodes_per_job);
  // A job with per-type speedups runs on one GPU type it has a speedup for.
  if (!job.speedup_by_type.empty() && !p.empty()) {
    const int t = nodes[static_cast<std::size_t>(p.front().node)].type;
    for (const NodeShare& s : p)
      if (nodes[static_cast<std::size_t>(s.node)].type != t)
        return name + ": spans GPU types " + std::to_string(t) + " and " +
               std::to_string(nodes[static_cast<std::size_t>(s.node)].type) + " (one type per job)";
    if (t >= static_cast<int>(job.speedup_by_type.size()) || !job.speedup_by_type[static_cast<std::size_t>(t)])
      return name + ": placed on GPU type " + std::to_string(t) + ", for which it has no speedup";
  }
  if (options.uniform_gpus_per_node)
    for (const NodeShare& s : p)
      if (s.gpus != p.front().gpus)
        return name + ": " + std::to_string(s.gpus) + " GPUs on node " + std::to_string(s.node) + " but " +
               std::to_string(p.front().gpus) + " on node " + std::to_string(p.front().node) +
               " (uniform_gpus_per_node)";
  return {};
}

}  // namespace

std::optional<std::string> check_allocation(const std::vector<JobInfo>& jobs,
                                            const std::vector<NodeInfo>& nodes,
                                            const std::vector<Placement>& alloc,
                                            const PolicyOptions& options) {
  if (alloc.size() != jobs.size())
    return "allocation has " + std::to_string(alloc.size()) + " entries for " + std::to_string(jobs.size()) + " jobs";
  const int num_nodes = static_cast<int>(nodes.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::string err = check_job(jobs, i, alloc[i], nodes, options);
    if (!err.empty()) return err;
  }
  std::vector<int> used(nodes.size(), 0);
  std::vector<long> distributed(nodes.size(), -1);  // first multi-node job seen on the node
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    for (const NodeShare& s : alloc[i]) {
      used[s.node] += s.gpus;
      if (options.interference_avoidance && alloc[i].size() > 1) {
        if (distributed[s.node] >= 0)
          return "node " + std::to_string(s.node) + " hosts two distributed jobs, " +
                 job_name(jobs, distributed[s.node]) + " and " + job_name(jobs, i) + " (interference avoidance)";
        distributed[s.node] = static_cast<long>(i);
      }
    }
  }
  for (int n = 0; n < num_nodes; ++n)
    if (used[n] > nodes[n].gpus)
      return "node " + std::to_string(n) + ": " + std::to_string(used[n]) + " GPUs allocated, capacity " +
             std::to_string(nodes[n].gpus);
  return std::nullopt;
}

void keep_distributed_apart(const std::vector<Placement>& others, std::vector<Placement>& out) {
  std::vector<bool> distributed;
  for (const Placement& p : others) {
    if (p.size() < 2) continue;
    for (const NodeShare& s : p) {
      const std::size_t n = static_cast<std::size_t>(s.node);
      if (n >= distributed.size()) distributed.resize(n + 1, false);
      distributed[n] = true;
    }
  }
  auto shared = [&](const NodeShare& s) {
    const std::size_t n = static_cast<std::size_t>(s.node);
    return n < distributed.size() && distributed[n];
  };
  for (Placement& p : out)
    if (p.size() > 1 && std::any_of(p.begin(), p.end(), shared)) p.clear();
}

}  // namespace pollux

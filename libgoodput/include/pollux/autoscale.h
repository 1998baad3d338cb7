// Goodput auto-scaling: how many nodes a cluster's jobs are worth running,
// the rule of the Pollux paper's section 5.4.1 as AdaptDL implements it
// (adaptdl_sched's Pollux policy, _desired_nodes and
// get_cluster_utilities): keep the cluster's utility - the jobs' speedup
// per GPU weighted by their share of the GPUs - within a band. A front end
// (pollux-sim --autoscale goodput; sched/pollux with power saving) powers
// nodes up and down to the size it returns.
#ifndef POLLUX_AUTOSCALE_H
#define POLLUX_AUTOSCALE_H

#include <vector>

#include "pollux/policy.h"

namespace pollux {

/// The utility band (AdaptDL's _min_util and _max_util); min < max, in [0, 1].
struct UtilityBand {
  double min = 0.35;
  double max = 0.65;
};

inline bool operator==(const UtilityBand& a, const UtilityBand& b) noexcept { return a.min == b.min && a.max == b.max; }

/// The cluster's utility (AdaptDL's get_cluster_utilities with GPUs the
/// one resource): sum over jobs of speedup / replicas x replicas / GPUs,
/// i.e. the jobs' summed speedups (each against one GPU; linear without a
/// model) at `alloc` over `gpus`, the GPUs paid for. 0 for no GPUs.
double cluster_utility(const std::vector<JobInfo>& jobs, const std::vector<Placement>& alloc, int gpus);

/// The desired cluster size (AdaptDL's _desired_nodes, on the best summed
/// speedup the jobs could reach on N nodes instead of NSGA-II's Pareto
/// front): `current` if its utility is within the band, else the N in
/// [1, max_nodes] whose utility is nearest the band's middle (ties: the
/// larger). The best summed speedup on G GPUs is found by giving GPUs one
/// step at a time to the job that gains most per GPU (a step reaching up to
/// a node's worth further, so a dip at a node boundary is crossed), within
/// each job's [0, max_replicas]; a job spans ceil(replicas / gpus_per_node)
/// nodes, or its min_nodes when more (at most one per GPU). No jobs: 0.
int desired_nodes(const std::vector<JobInfo>& jobs, int current, int max_nodes, int gpus_per_node,
                  const UtilityBand& band);

/// The fewest nodes that keep every job holding GPUs in `alloc` running
/// at its minimum: max(min_replicas, 1) GPUs on at least min_nodes nodes,
/// packed first-fit decreasing onto nodes of `gpus_per_node` (a minimum
/// beyond a node takes whole nodes). AdaptDL's band has no such floor: a
/// target below it leaves the policy fewer GPUs than the running jobs need
/// and stops one of them, its progress held back for a node's price.
int nodes_to_keep_running(const std::vector<JobInfo>& jobs, const std::vector<Placement>& alloc, int gpus_per_node);

/// What auto-scaling sizes the cluster to, and from what.
struct AutoscaleTarget {
  int nodes = 0;     ///< max(band, floor), at most max_nodes
  int band = 0;      ///< desired_nodes
  int floor = 0;     ///< nodes_to_keep_running
};

/// What auto-scaling sizes the cluster to: desired_nodes, but never below
/// nodes_to_keep_running (nor above max_nodes). `alloc`: the jobs'
/// placements now.
AutoscaleTarget autoscale_target(const std::vector<JobInfo>& jobs, const std::vector<Placement>& alloc, int current,
                     int max_nodes, int gpus_per_node, const UtilityBand& band);

}  // namespace pollux

#endif  // POLLUX_AUTOSCALE_H

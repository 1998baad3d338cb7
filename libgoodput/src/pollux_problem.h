// The Pollux cluster-optimisation problem of one round (reference section
// 4): jobs in priority order, their limits, normalised speedups, restart
// penalties, and the fitness both searches maximise.
//
// Fitness of an allocation A: (mean_j (x_j + 1e-3)^p)^(1/p) (geometric mean
// of x_j + 1e-3 when p = 0), with
//   x_j = speedup_j(N_j, R_j) / speedup_j(fair) * (#nodes / #cluster GPUs)
//         * (A_j != current_j ? max(age - restarts D, 0) / (age + D) : 1),
// speedup_j(fair) the job's speedup at its fair share (ceil(GPUs / jobs)
// replicas on ceil(nodes / GPUs) nodes), as the artifact normalises it.
// Since the power mean is monotone in the sum of per-job terms, the searches
// work on that sum: term() is a per-job utility whose sum orders
// allocations exactly as the fitness does.
#ifndef POLLUX_SRC_POLLUX_PROBLEM_H
#define POLLUX_SRC_POLLUX_PROBLEM_H

#include <vector>

#include "pollux/policy.h"

namespace pollux::detail {

class PolluxProblem {
 public:
  /// Jobs are reordered by priority: attained service, then submit time,
  /// then id (the artifact's order; it decides who keeps GPUs in a repair).
  /// Inputs must have passed validate_round().
  PolluxProblem(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                const std::vector<Placement>& current, const PolicyOptions& options);

  int num_jobs() const noexcept { return static_cast<int>(jobs_.size()); }
  int num_nodes() const noexcept { return static_cast<int>(capacity_.size()); }
  int capacity(int node) const noexcept { return capacity_[node]; }
  int max_capacity() const noexcept { return max_capacity_; }
  long total_gpus() const noexcept { return total_gpus_; }
  const PolicyOptions& options() const noexcept { return options_; }

  /// Job j (priority order) is jobs[caller_index(j)] in the caller's vector.
  int caller_index(int j) const noexcept { return jobs_[j].caller; }
  std::uint64_t id(int j) const noexcept { return jobs_[j].id; }
  /// Smallest non-zero size (>= 1) and largest size; max < min: never runs.
  int min_gpus(int j) const noexcept { return jobs_[j].min_gpus; }
  int max_gpus(int j) const noexcept { return jobs_[j].max_gpus; }
  int max_nodes(int j) const noexcept { return jobs_[j].max_nodes; }
  /// Fewest nodes when it runs (JobInfo::min_nodes, at least 1).
  int min_nodes(int j) const noexcept { return jobs_[j].min_nodes; }
  /// Whether j may use `node` (JobInfo::allowed_nodes).
  bool allowed(int j, int node) const noexcept {
    const std::vector<char>& a = jobs_[j].allowed;
    return a.empty() || a[static_cast<std::size_t>(node)] != 0;
  }
  /// The job's current placement, normalised, nodes outside the cluster dropped.
  const Placement& current(int j) const noexcept { return jobs_[j].current; }

  /// Per-job utility of j running `gpus` GPUs on `nodes` nodes; `changed`
  /// applies the restart penalty. Larger is better; 0 GPUs is the floor.
  double term(int j, int nodes, int gpus, bool changed) const;
  double term(int j, const Placement& p) const;
  /// The term of a job without GPUs: (1e-3)^p for p > 0, the smallest
  /// magnitude a term can have then.
  double idle_term() const { return utility_of(0.0); }
  /// Normalised, unpenalised speedup (speedup / fair-share speedup).
  double speedup(int j, int nodes, int gpus) const;
  /// Fitness from the sum of all jobs' terms.
  double fitness_from_sum(double sum) const;
  /// Fitness of a whole allocation (priority order), summed in job order.
  double fitness(const std::vector<Placement>& alloc) const;
  /// The artifact's second GA objective: sum of normalised speedups over the
  /// GPUs of the nodes in use (0 when no node is used).
  double utility(const std::vector<Placement>& alloc) const;

 private:
  struct Job {
    int caller = 0;
    std::uint64_t id = 0;
    int min_gpus = 1, max_gpus = 0, max_nodes = 0, min_nodes = 1;
    double scale = 0;    // dominant share x #nodes / fair-share speedup
    double penalty = 1;  // restart factor
    const SpeedupFn* fn = nullptr;
    double linear_base = 1;  // fair replicas, for jobs without a model
    Placement current;
    std::vector<char> allowed;  // empty: every node
    mutable std::vector<std::vector<double>> memo;  // [nodes][gpus], < 0 = unknown
  };
  double utility_of(double x) const;

  PolicyOptions options_;
  std::vector<Job> jobs_;
  std::vector<int> capacity_;
  int max_capacity_ = 0;
  long total_gpus_ = 0;
};

}  // namespace pollux::detail

#endif  // POLLUX_SRC_POLLUX_PROBLEM_H

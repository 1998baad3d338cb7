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
// On a cluster of several GPU types (NodeInfo::type), a job's speedup is
// that of the type its placement's nodes have (JobInfo::speedup_by_type,
// all on one scale), speedup_j(fair) is its best over the types it may
// use, and a placement over two types is worth nothing (never chosen).
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
  /// Whether j may use `node` (JobInfo::allowed_nodes, and a GPU type it
  /// has a speedup for).
  bool allowed(int j, int node) const noexcept {
    const std::vector<char>& a = jobs_[j].allowed;
    return (a.empty() || a[static_cast<std::size_t>(node)] != 0) && type_ok(j, type_[node]);
  }
  int num_types() const noexcept { return num_types_; }
  int type(int node) const noexcept { return type_[node]; }
  bool type_ok(int j, int t) const noexcept { return jobs_[j].types[t].usable; }
  /// The GPU type of a placement's nodes; -1 when it mixes types, 0 when empty.
  int type_of(const Placement& p) const noexcept;
  /// The type where j's fair-share speedup is highest (0 when untyped).
  int best_type(int j) const noexcept { return jobs_[j].best_type; }
  /// The job's current placement, normalised, nodes outside the cluster dropped.
  const Placement& current(int j) const noexcept { return jobs_[j].current; }

  /// Per-job utility of j running `gpus` GPUs on `nodes` nodes of GPU type
  /// `type` (-1: its best type); `changed` applies the restart penalty.
  /// Larger is better; 0 GPUs is the floor.
  double term(int j, int nodes, int gpus, bool changed, int type = -1) const;
  double term(int j, const Placement& p) const;
  /// The term of a job without GPUs: (1e-3)^p for p > 0, the smallest
  /// magnitude a term can have then.
  double idle_term() const { return utility_of(0.0); }
  /// Normalised, unpenalised speedup (speedup / fair-share speedup) on
  /// `type` (-1: j's best type).
  double speedup(int j, int nodes, int gpus, int type = -1) const;
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
    double linear_base = 1;  // fair replicas, for jobs without a model
    struct Type {
      bool usable = true;
      const SpeedupFn* fn = nullptr;  // nullptr: linear
      mutable std::vector<std::vector<double>> memo;  // [nodes][gpus], < 0 = unknown
    };
    std::vector<Type> types;  // per GPU type
    int best_type = 0;
    Placement current;
    std::vector<char> allowed;  // empty: every node
  };
  double utility_of(double x) const;

  PolicyOptions options_;
  std::vector<Job> jobs_;
  std::vector<int> capacity_;
  std::vector<int> type_;  // per node
  int num_types_ = 1;
  int max_capacity_ = 0;
  long total_gpus_ = 0;
};

}  // namespace pollux::detail

#endif  // POLLUX_SRC_POLLUX_PROBLEM_H

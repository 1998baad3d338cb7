// Cluster scheduling policies: given the jobs (with speedup functions,
// ages, restarts, limits), the nodes (GPU counts) and the current
// allocation, return a new allocation. Pollux (section 4.2), the two
// baselines the paper compares against (Tiresias and Optimus+Oracle), a
// Sia-like policy, and what a Slurm site runs today: Slurm's sched/backfill
// (rigid jobs in submit order, later ones started where by the time limits
// they delay none); pollux/policies.h lists them.
#ifndef POLLUX_POLICY_H
#define POLLUX_POLICY_H

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pollux/speedup.h"

namespace pollux {

/// A node of the cluster. Its index in the nodes vector identifies it.
struct NodeInfo {
  int gpus = 0;
  /// Its GPU type, 0..#types - 1 (a cluster of one type: all 0). Pollux
  /// places a job on nodes of one type only (data-parallel replicas on
  /// several types would all be paced by the slowest).
  int type = 0;
};

/// GPUs (replicas) of one job on one node.
struct NodeShare {
  int node = 0;
  int gpus = 0;
  bool operator==(const NodeShare& o) const noexcept { return node == o.node && gpus == o.gpus; }
};

/// A job's allocation: one entry per node used, sorted by node index, no
/// zero entries. Empty = not running.
using Placement = std::vector<NodeShare>;

int placement_nodes(const Placement& p) noexcept;
int placement_gpus(const Placement& p) noexcept;
/// Sorts by node, merges duplicates and drops zero entries.
Placement normalize_placement(Placement p);

/// Pollux's restart factor: the share of a job's age not lost to its
/// restarts, projected one restart (`delay` seconds) ahead:
/// max(age - restarts x delay, 0) / (age + delay); 1 when age + delay is 0.
inline double restart_factor(double age, int restarts, double delay) noexcept {
  return age + delay > 0 ? (age - restarts * delay > 0 ? age - restarts * delay : 0.0) / (age + delay) : 1.0;
}

/// What a policy knows of one job.
struct JobInfo {
  std::uint64_t id = 0;          ///< stable across rounds (policies keep per-job state)
  SpeedupFn speedup;             ///< empty: no model yet, linear speedup
  /// Pollux on a cluster of several GPU types: the job's speedup on nodes
  /// of type t (NodeInfo::type), all measured against the same base - the
  /// job's best one-GPU goodput on any type (TypedGoodput builds them) -
  /// so that they compare across types. An empty entry, or a type beyond
  /// the vector, is a type the job may not use. Empty vector: `speedup`
  /// on every type (the untyped case).
  std::vector<SpeedupFn> speedup_by_type;
  double submit_time = 0;        ///< seconds; ties in FIFO order are broken by id
  double age = 0;                ///< seconds since submission
  int restarts = 0;              ///< re-allocations so far
  /// D for this job: seconds a re-allocation costs it. A front end's job
  /// description decides it (pollux/job_description.h: the larger of the
  /// job's measured restart cost and the scheduler's restart penalty); the
  /// paper's 30 s until then. The policies read it as it is.
  double restart_delay = 30.0;
  /// In the middle of a checkpoint-restore (its last re-allocation's
  /// restart is not over): the Sia-like policy keeps its configuration
  /// (Sia's simulator's preserve_ckpt_allocs); the others ignore it.
  bool restarting = false;
  int min_replicas = 0;          ///< fewer GPUs than this is useless: give 0
  int max_replicas = 1;          ///< never more GPUs than this
  double attained_service = 0;   ///< GPU-seconds received so far
  int requested_gpus = 1;        ///< the user-given size (Tiresias and backfill run jobs at it)
  /// Optimus+Oracle only: seconds per iteration at the user's batch size
  /// with R replicas, and the exact number of iterations left.
  std::function<double(int replicas)> iteration_time;
  double remaining_iterations = 0;
  /// Backfill only: the job's time limit in seconds (0: none, Slurm's
  /// INFINITE, taken as a year), and for a job that holds GPUs the seconds
  /// since it started them; Slurm's backfill expects a running job to end
  /// at start + time limit.
  double time_limit = 0;
  double run_time = 0;
  /// Where the job may run (a scheduler's partitions, excluded nodes...):
  /// allowed_nodes[n] for node n; empty = every node. Pollux never places
  /// the job elsewhere (a current placement elsewhere is not kept); the
  /// baselines ignore it.
  std::vector<bool> allowed_nodes;
  /// The most nodes the job may span (e.g. its partition's limit), below
  /// PolicyOptions::max_nodes_per_job; 0 = only that option's limit.
  int max_nodes = 0;
  /// The fewest nodes the job may span when it runs (e.g. its partition's
  /// MinNodes, or its own minimum); 0 or 1 = any. Pollux gives it no GPUs
  /// rather than fewer nodes; the baselines ignore it.
  int min_nodes = 0;
};

enum class SearchKind {
  kGenetic,  ///< the paper's GA: population x generations, seeded by the last round
  kLocal,    ///< greedy construction + local search on the same fitness (default)
};

/// The range of PolicyOptions::fairness_p (inclusive); make_policy throws
/// std::invalid_argument outside it. Front ends check against these.
inline constexpr double kMinFairnessP = -50.0;
inline constexpr double kMaxFairnessP = 50.0;

/// Every tunable of the policies, with the paper's defaults.
struct PolicyOptions {
  double fairness_p = -1.0;            ///< power-mean exponent, in [kMinFairnessP, kMaxFairnessP]; more negative = fairer
  bool interference_avoidance = true;  ///< at most one distributed job per node
  int max_nodes_per_job = 16;
  /// Slurm grants GPUs per node uniformly: a multi-node job gets the same
  /// number of GPUs on every node it uses. Off in the paper.
  bool uniform_gpus_per_node = false;
  SearchKind search = SearchKind::kLocal;
  int population = 100;                ///< GA population
  int generations = 100;               ///< GA generations
  /// Job-term evaluations (one job's fitness term for one candidate
  /// placement) the local search may spend per round; 0 = what the GA
  /// spends: population x generations x #jobs. It stops earlier when
  /// further search keeps failing, and on rounds of thousands of jobs
  /// after a million evaluations of perturbation (doc/policy.md).
  long long search_budget = 0;
  std::uint64_t seed = 1;              ///< same seed, same inputs -> same result
  double tiresias_queue_threshold = 16 * 3600.0;  ///< GPU-seconds
  /// The Sia-like policy's penalty for a job left without GPUs (Sia's
  /// lambda_n; its run_experiment.sh's 1.1).
  double sia_lambda_n = 1.1;
};

/// What the last optimize() call did, for logs and benchmarks.
struct PolicyReport {
  double fitness = 0;            ///< fitness of the returned allocation (Pollux)
  long long evaluations = 0;     ///< job-term evaluations spent (a whole allocation counts #jobs)
  double seconds = 0;            ///< wall time of the round
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const noexcept = 0;

  /// `current[i]` is the placement `jobs[i]` holds now (same length as
  /// jobs). Returns one placement per job, in the same order, that respects
  /// every constraint of `options()` and every node's capacity.
  /// Throws std::invalid_argument on inconsistent input.
  virtual std::vector<Placement> optimize(const std::vector<JobInfo>& jobs,
                                          const std::vector<NodeInfo>& nodes,
                                          const std::vector<Placement>& current,
                                          double now) = 0;

  const PolicyOptions& options() const noexcept { return options_; }
  const PolicyReport& last_report() const noexcept { return report_; }

  /// What the policy carries from one optimize() to the next besides its
  /// inputs (Pollux: its random generator), as one line of text, so that a
  /// scheduler that restarts can go on exactly where it was: after
  /// restore_search_state() of a search_state() the next optimize() returns
  /// what it would have returned without the restart. Empty: none (the
  /// baselines; Pollux's genetic search keeps its seeds, which are not saved).
  virtual std::string search_state() const { return {}; }
  /// False, and nothing changed, when `state` is not one this policy's
  /// search_state() wrote (another policy's, damaged).
  virtual bool restore_search_state(std::string_view state) { return state.empty(); }

 protected:
  explicit Policy(const PolicyOptions& options) : options_(options) {}
  PolicyOptions options_;
  PolicyReport report_;
};

/// The policy of that name in the table (pollux/policies.h); nullptr for
/// an unknown name. Throws std::invalid_argument for options out of range
/// (say which).
std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& options);

/// Checks an allocation against node capacity, max/min replicas, max nodes
/// per job, interference avoidance and uniform GPUs per node (as enabled in
/// `options`). Returns a description of the first violation, or nullopt.
std::optional<std::string> check_allocation(const std::vector<JobInfo>& jobs,
                                            const std::vector<NodeInfo>& nodes,
                                            const std::vector<Placement>& alloc,
                                            const PolicyOptions& options);

}  // namespace pollux

#endif  // POLLUX_POLICY_H

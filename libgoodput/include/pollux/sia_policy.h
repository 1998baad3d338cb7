// A Sia-like policy (pollux-sim --policy sia): our own implementation
// of the scheduling formulation of Sia (Jayaram Subramanya et al., SOSP'23,
// section 3.3; the artifact's sia-simulator/sia.py at commit aaf7a0de),
// for comparison on heterogeneous clusters. Not used by sched/pollux.
//
// Each round, for every job i and every configuration j = (GPU type t,
// GPU count k): k in {1, 2, 4, ... < node size} on one node, or a multiple
// of the node size on k / node size whole nodes of type t (at most the
// type's nodes), within the job's [min_replicas, max_replicas].
//
//   G_ij  = the job's goodput at j (JobInfo::speedup_by_type[t] at
//           (nodes, k)), divided by its smallest value over the job's
//           valid configurations (so G_ij >= 1 and rows compare across
//           jobs);
//   r_i   = max(age - restarts x D, 0) / (age + D), 1 while age < D
//           (D = the job's JobInfo::restart_delay: pollux-sim gives Sia's
//           per-model penalty there with --sia-calibration): G_ij x r_i
//           for every j but the configuration the job holds now;
//   A_ij  = min(3000, round((G_ij r_i)^p, 2 decimals)), p the fairness
//           exponent (Sia's default -0.5);
//
// and the binary program over x_ij (lambda_n: PolicyOptions::sia_lambda_n):
//
//   p < 0: minimise  sum_ij x_ij (A_ij - lambda_n)   (p > 0: maximise)
//   s.t.   sum_j x_ij <= 1                       for every job
//          sum_ij x_ij k_j [type_j = t] <= GPUs of type t   for every type
//
// (Sia's objective sum x A + lambda_n (#jobs - sum x) less its constant.)
// It is solved exactly (relative gap 1e-4, as Sia asks of its solver) with
// GLPK's branch and cut (at most 2 s per program: then the best solution
// found). The chosen (type, count) pairs are then placed on
// nodes: a job whose configuration is unchanged keeps its GPUs; the others
// go, largest first, onto whole free nodes or the fullest node with room;
// if that fails the type is re-packed from scratch (jobs that move restart).
// A job in the middle of a restart (JobInfo::restarting) keeps its
// configuration.
// Power-of-two sizes below the node size and whole nodes always pack.
#ifndef POLLUX_SIA_POLICY_H
#define POLLUX_SIA_POLICY_H

#include <string_view>
#include <vector>

#include "pollux/policy.h"

namespace pollux {

/// Sia's defaults (run_experiment.sh: p = -0.5, lambda_n = 1.1).
inline constexpr double kSiaDefaultP = -0.5;
inline constexpr double kSiaDefaultLambdaN = PolicyOptions{}.sia_lambda_n;

class SiaPolicy final : public Policy {
 public:
  /// options.fairness_p is Sia's p (non-zero), options.sia_lambda_n its lambda_n.
  explicit SiaPolicy(const PolicyOptions& options);
  std::string_view name() const noexcept override { return "sia"; }
  /// Throws std::runtime_error when the build has no GLPK or the solver
  /// fails, std::invalid_argument on inconsistent input.
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current, double now) override;

  /// Whether this build can solve the program (GLPK found by configure).
  static bool available() noexcept;
};

}  // namespace pollux

#endif  // POLLUX_SIA_POLICY_H

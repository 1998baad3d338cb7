// A Sia-like policy for pollux-sim (--policy sia): our own implementation
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
//           (D = job_restart_delay of the job's JobInfo::restart_delay
//           and options' restart_delay; Sia's per-model penalty where set
//           by set_restart_penalties): G_ij x r_i for every j but the
//           configuration the job holds now;
//   A_ij  = min(3000, round((G_ij r_i)^p, 2 decimals)), p the fairness
//           exponent (Sia's default -0.5);
//
// and the binary program over x_ij:
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
// A job in the middle of a restart keeps its configuration (pin_restarting).
// Power-of-two sizes below the node size and whole nodes always pack.
#ifndef POLLUX_SIM_SIA_POLICY_H
#define POLLUX_SIM_SIA_POLICY_H

#include <memory>
#include <string_view>
#include <vector>

#include "pollux/policy.h"

namespace pollux::sim {

/// Sia's defaults (run_experiment.sh: p = -0.5, lambda_n = 1.1).
inline constexpr double kSiaDefaultP = -0.5;
inline constexpr double kSiaDefaultLambdaN = 1.1;

class SiaPolicy final : public Policy {
 public:
  /// options.fairness_p is Sia's p (non-zero); options.restart_delay the least
  /// D of every job (job_restart_delay).
  SiaPolicy(const PolicyOptions& options, double lambda_n);
  std::string_view name() const noexcept override { return "sia"; }
  /// Throws std::runtime_error when the build has no GLPK or the solver
  /// fails, std::invalid_argument on inconsistent input.
  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current, double now) override;

  /// Whether this build can solve the program (GLPK found by configure).
  static bool available() noexcept;

  /// For the next optimize() only: jobs[i] with mid_restart[i] is in the
  /// middle of a checkpoint-restore and keeps its configuration (Sia's
  /// simulator's preserve_ckpt_allocs; matters when a restart outlasts the
  /// interval, e.g. with --sia-calibration).
  void pin_restarting(std::vector<char> mid_restart) { pinned_ = std::move(mid_restart); }
  /// For the next optimize() only: jobs[i]'s restart penalty D in the
  /// restart factor (Sia's per-model penalties); empty: the job's own D
  /// (pollux::job_restart_delay of JobInfo::restart_delay and options').
  void set_restart_penalties(std::vector<double> seconds) { penalties_ = std::move(seconds); }

 private:
  double lambda_n_;
  std::vector<char> pinned_;
  std::vector<double> penalties_;
};

}  // namespace pollux::sim

#endif  // POLLUX_SIM_SIA_POLICY_H

// A job's goodput on each GPU type of a heterogeneous cluster.
//
// The throughput model (PerfParams: T_grad, T_sync, gamma) depends on the
// hardware and is kept per GPU type; the gradient statistics (statistical
// efficiency) do not, and are one per job. A job runs on one type at a
// time: data-parallel replicas on several types would each wait for the
// slowest at every all-reduce, so a mixed placement is worth the slowest
// type's throughput on all its GPUs and is never chosen.
//
// A type the job has not run on yet gets an estimate from a type it has
// run on: T_grad (alpha_c, beta_c) scaled by the two types' compute ratio
// (TypeRatios: seeded by the administrator or from published figures, and
// learnt across jobs that ran on both), T_sync and gamma kept (the
// interconnect is not what the GPU type changes first). Each estimate is
// marked as such and is replaced by the job's own fit once it has run on
// that type (doc/libgoodput.md says why ratios rather than a profile run
// per type).
//
// Exploration: a type whose speed nobody gave (TypeRatios' `known`) has
// only a guess for a seed. A pair of two such types has no known ratio
// (one given speed is a ratio to the others' seeds: that pair is known);
// until one job has run on both (the pair's first observation), an
// estimate across it is
// optimistic: the other type kExploreSpeedup times faster than the
// seeds say, both ways, so that the policy moves a job there when it has
// room and its gain outweighs the restart. The cost is bounded: a job
// is moved for it at most once per type (afterwards it has its own fit
// there, never an estimate), and only while the pair is unobserved.
#ifndef POLLUX_TYPED_GOODPUT_H
#define POLLUX_TYPED_GOODPUT_H

#include <optional>
#include <vector>

#include "pollux/goodput.h"
#include "pollux/speedup.h"

namespace pollux {

/// Relative speeds of the GPU types for one micro-step (T_grad), learnt
/// across jobs. speed(t) / speed(u) = T_grad on u / T_grad on t.
class TypeRatios {
 public:
  /// `seed[t]` > 0: the prior speed of type t (any unit, e.g. 1 for the
  /// slowest). Throws std::invalid_argument for an empty seed or a speed
  /// that is not finite and positive.
  /// `known[t]`: type t's seed was given (by the administrator, or a
  /// published figure); false: a guess. Empty: all given (no exploration).
  /// Throws std::invalid_argument also when `known` is neither empty nor
  /// one per type.
  explicit TypeRatios(std::vector<double> seed, std::vector<bool> known = {});

  /// How much faster than its seed an unexplored type is assumed to be.
  static constexpr double kExploreSpeedup = 2.0;

  int types() const noexcept { return static_cast<int>(seed_.size()); }
  /// Whether the ratio between a and b is known: either's seed given (a
  /// given speed is relative to the others' seeds), or at least one
  /// observation between them (a == b: true).
  bool explored(int a, int b) const noexcept;
  /// T_grad on `to` / T_grad on `from` for an estimate of a job's
  /// throughput on `to` from its fit on `from`: grad_time_ratio(), divided
  /// by kExploreSpeedup when the pair is not explored().
  double estimate_ratio(int from, int to) const noexcept;
  /// T_grad on `to` / T_grad on `from`: the prior's ratio, moved towards
  /// the geometric mean of the ratios observed between the two types (the
  /// prior counts as one observation).
  double grad_time_ratio(int from, int to) const noexcept;
  /// One job measured T_grad on both types (at the same micro-batch, or
  /// fitted models evaluated at one). Ignores non-finite or non-positive
  /// times and types out of range.
  void observe(int a, int b, double grad_time_a, double grad_time_b) noexcept;
  /// Observations so far between a and b.
  int observations(int a, int b) const noexcept;
  /// The sum of log(T_grad on b / T_grad on a) over those observations.
  double log_ratio_sum(int a, int b) const noexcept;
  /// Adds `count` observations between a and b whose log(T_b / T_a) sum
  /// to `log_sum` (observations() and log_ratio_sum() of another
  /// TypeRatios: a learner's state restored). Ignores types out of range,
  /// a == b, count < 1 and a non-finite sum.
  void add_observations(int a, int b, int count, double log_sum) noexcept;

 private:
  std::vector<double> seed_;
  std::vector<bool> known_;
  std::vector<double> log_sum_;  // [a * T + b]: sum of log(T_b / T_a)
  std::vector<int> count_;
};

/// One job's micro-step times on the types it has fits on, told to
/// `ratios` once per pair of types: `fits[t]` its fit on type t (one per
/// type), evaluated at `micro_batch`; `seen[a * T + b]` (resized to T x T)
/// marks the pairs already told for this job. The one learning rule of
/// sched/pollux's learner and pollux-sim. Returns whether it told any.
bool observe_fits(TypeRatios& ratios, const std::vector<std::optional<PerfParams>>& fits, double micro_batch,
                  std::vector<bool>& seen);

/// Where a type's throughput model comes from.
enum class TypeModelSource {
  kFitted,     ///< the job's own profile on that type
  kEstimated,  ///< another type's fit, scaled by TypeRatios (estimate_ratio: optimistic while unexplored)
  kNone,       ///< no fit on any type yet
};

/// A job's goodput per GPU type.
class TypedGoodput {
 public:
  /// `fitted[t]`: the job's throughput fit on type t, if it has run there.
  /// Estimates for the other types come from the fitted type with the most
  /// weight in `samples` (its profiled configurations; ties: the lowest
  /// type), or from the first fitted type when `samples` is empty. Throws
  /// std::invalid_argument when fitted.size() != ratios.types() or the
  /// limits are invalid.
  TypedGoodput(const std::vector<std::optional<PerfParams>>& fitted, const GradStats& grad,
               const BatchLimits& limits, const TypeRatios& ratios, const std::vector<int>& samples = {});

  int types() const noexcept { return static_cast<int>(perf_.size()); }
  TypeModelSource source(int type) const noexcept { return source_[type]; }
  /// The throughput model used for `type` (fitted or estimated); only
  /// meaningful when source(type) != kNone.
  const PerfParams& perf(int type) const noexcept { return perf_[type]; }
  /// Best goodput (examples per second, efficiency-weighted) on `type` at
  /// (nodes, replicas); 0 when none is valid or no model exists.
  double goodput(int type, int nodes, int replicas) const;
  /// The job's best one-GPU goodput on any type: the base of every speedup.
  double base_goodput() const noexcept { return base_; }
  /// The type with the best one-GPU goodput (0 without a model).
  int best_type() const noexcept { return best_type_; }
  /// speedup_t(n, r) = goodput on type t at (n, r) / base_goodput(), one
  /// per type, for JobInfo::speedup_by_type. Without a fit on any type:
  /// linear speedups scaled by the types' relative speeds (the fastest 1
  /// GPU = 1). A type with no valid configuration gets an empty function
  /// (the job may not use it). The functions share this object's models
  /// (copied): they outlive it.
  std::vector<SpeedupFn> speedups() const;

 private:
  std::vector<PerfParams> perf_;
  std::vector<TypeModelSource> source_;
  std::vector<double> speed_;  // relative speeds, for the linear case
  GradStats grad_;
  BatchLimits limits_;
  double base_ = 0;
  int best_type_ = 0;
};

}  // namespace pollux

#endif  // POLLUX_TYPED_GOODPUT_H

// SPDX-License-Identifier: GPL-2.0-or-later
// The GPU types of a cluster as sched/pollux sees them, and each elastic
// job's goodput on every type (libgoodput's TypedGoodput).
//
// - Types are Slurm's GRES type names of the nodes' GPUs (Gres=gpu:a100:4),
//   as the snapshot reads them (common/compat_gres.h); untyped GPUs are the
//   type "". The cluster's types are their sorted distinct names, and
//   NodeInfo::type a node's index among them.
// - A hint names the type its throughput fit was measured on in the
//   agent's words (often the CUDA device name, "NVIDIA H100 80GB HBM3");
//   match_gpu_type() is the one rule that maps it onto a Slurm type name.
// - A job's fits: the hint's own on its type (or, when the hint names none
//   or none that matches, on the type of the nodes the job runs on now),
//   and the fits on other types it ran on before (type_perf). Types it has
//   not run on get estimates through TypeRatios: seeded by the
//   administrator (pollux_gpu_type_speeds; 1 for a type not named), and
//   learnt from jobs with fits on two types (TypeSpeedLearner). Between
//   two types not named, until the first job has fits on both, the
//   estimate is optimistic (libgoodput's exploration, typed_goodput.h), so
//   that a cluster started without speeds learns them.
// - A cluster of one type (or untyped) has no per-type model at all: the
//   policy sees exactly what it saw before types existed.
#ifndef POLLUX_SCHED_GPU_TYPES_H
#define POLLUX_SCHED_GPU_TYPES_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "elastic.h"
#include "job_model.h"
#include "params.h"
#include "pollux/typed_goodput.h"

namespace pollux::sched {

/// The cluster's types (sorted distinct names) and each node's index among them.
struct GpuTypes {
  std::vector<std::string> names;
  std::vector<int> of_node;
};
GpuTypes group_gpu_types(const std::vector<std::string>& node_types);

/// The index in `types` (the cluster's Slurm type names) of the type a
/// hint's `hint_type` names, -1 for none, by the spool library's one rule
/// (pollux/gpu_type.h: gpu_type_matches(): equal once normalised, or a run
/// of whole tokens of the normalised hint name: "NVIDIA H100 80GB HBM3"
/// names h100 and h100_80gb); of several, the longest name wins, then the
/// first. "" names no type.
int match_gpu_type(std::string_view hint_type, const std::vector<std::string>& types);

/// TypeRatios' seed for `types`: the administrator's speed of each, 1 for a
/// type not named.
std::vector<double> type_speed_seed(const std::vector<std::string>& types, const GpuTypeSpeeds& speeds);
/// Which of `types` the administrator named (TypeRatios' `known`): a pair
/// of types neither named is explored until a job has run on both.
std::vector<bool> type_speed_known(const std::vector<std::string>& types, const GpuTypeSpeeds& speeds);
/// The TypeRatios of `types` before anything is learnt.
TypeRatios seeded_type_ratios(const std::vector<std::string>& types, const GpuTypeSpeeds& speeds);

/// The job's throughput fits on the cluster's types: the hint's own on the
/// type its gpu_type names, or on `running_type` (-1: none) when it names
/// none that matches; each of type_perf's on the type it names (the hint's
/// own wins on the same type). Without a model: all empty.
std::vector<std::optional<PerfParams>> fits_by_type(const std::optional<JobModel>& model,
                                                    const std::vector<std::string>& types, int running_type);

/// A job's model on each type of a cluster of several.
struct TypedJobModel {
  /// Per type, the job's speedup against its best one-GPU goodput on any
  /// type (JobInfo::speedup_by_type), 0 for sizes its range forbids (as
  /// range_speedup; every size counts when placements need not be
  /// uniform: typed_job_model); an empty function for a type it has no valid
  /// configuration on. Without a model: linear, scaled by the types'
  /// speeds; with one measured on no type it can be placed by (no gpu_type
  /// and not running): its own speedup on every type, and no models.
  std::vector<SpeedupFn> speedups;
  /// Per type, the model the view shows (fitted or estimated); nullopt
  /// without one.
  std::vector<std::optional<JobModel>> models;
  std::vector<TypeModelSource> sources;
};

/// The job's model per type; `ratios` has one slot per type.
/// `uniform_placements` as RoundRules': true (sched/pollux's) counts
/// uniform sizes of `range` only (within_range); false, every size (the
/// node range is the policy's to keep), as the untyped speedup then. Never
/// throws but std::bad_alloc.
TypedJobModel typed_job_model(const std::optional<JobModel>& model, const ElasticRange& range,
                              const std::vector<std::string>& types, int running_type, const TypeRatios& ratios,
                              bool uniform_placements = true);

/// What a TypeSpeedLearner has learnt, in a form that outlives it (kept
/// across slurmctld restarts by type_speeds_file.h).
struct LearntTypeSpeeds {
  std::vector<std::string> types;  ///< the cluster's types (sorted, distinct, at least 2)
  std::vector<double> seed;        ///< the seed it learnt from, one per type
  struct Pair {
    int a = 0, b = 0;     ///< a < b, indices in `types`
    int count = 0;        ///< observations between them (>= 1)
    double log_sum = 0;   ///< sum of log(T_grad on b / T_grad on a)
    bool operator==(const Pair& o) const noexcept {
      return a == o.a && b == o.b && count == o.count && log_sum == o.log_sum;
    }
  };
  std::vector<Pair> pairs;  ///< by (a, b)
  struct Seen {
    std::uint32_t job = 0;  ///< a live job whose pair (a, b) was observed
    int a = 0, b = 0;
    bool operator==(const Seen& o) const noexcept { return job == o.job && a == o.a && b == o.b; }
  };
  std::vector<Seen> seen;  ///< by (job, a, b)
  bool operator==(const LearntTypeSpeeds& o) const noexcept {
    return types == o.types && seed == o.seed && pairs == o.pairs && seen == o.seen;
  }
};

/// The TypeRatios of the cluster's types, learnt across rounds: seeded from
/// pollux_gpu_type_speeds, and told, once per job and pair of types, the
/// micro-step times of a job with fits on both (at its smallest
/// micro-batch). When the cluster's types or the seed change, the prior is
/// the new seed's and the observations between types still present are
/// kept (an observation is a measurement between two named types, not of
/// the seed); those of a type that is gone are dropped. What it learnt
/// (learnt()) can be restored into a new learner (restore(): a restart),
/// which then gives the same ratios on the same types and seed.
class TypeSpeedLearner {
 public:
  const TypeRatios& ratios(const std::vector<std::string>& types, const GpuTypeSpeeds& speeds);
  /// `fits`: fits_by_type() of job `job_id` (with no running type: only
  /// the types its hint names); each pair of types is observed once per job.
  void learn(std::uint32_t job_id, const std::vector<std::optional<PerfParams>>& fits, const BatchLimits& limits);
  /// Jobs not in `alive` are forgotten (their observations stay).
  void forget_others(std::vector<std::uint32_t> alive);

  /// What it has learnt; no types before the first ratios().
  LearntTypeSpeeds learnt() const;
  /// Takes `learnt` up at the next ratios() that starts the learner (the
  /// first, or one with other types or seed), as a change of types or seed
  /// carries observations over: by type name, whatever seed it was learnt
  /// with.
  void restore(LearntTypeSpeeds learnt);
  /// Once after the ratios() that took a restored state: whether
  /// any of it applied (true: the same types, or an observation between
  /// types still present) or none (false); nullopt otherwise.
  std::optional<bool> take_restored();
  /// Whether learnt() changed since the last call (a start by ratios()
  /// counts: the state to keep is then a new one).
  bool take_changed();

 private:
  std::vector<std::string> types_;
  GpuTypeSpeeds speeds_;
  std::vector<double> seed_;
  std::optional<TypeRatios> ratios_;
  std::unordered_map<std::uint32_t, std::vector<bool>> seen_;  // per job: pairs observed (a * T + b)
  // What `from` learnt, onto the current (fresh) ratios_ by type name;
  // whether any of it applied.
  bool carry(const LearntTypeSpeeds& from);

  std::optional<LearntTypeSpeeds> pending_;  // restore()'s, until the next start
  std::optional<bool> restored_;
  bool changed_ = false;
};

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_GPU_TYPES_H

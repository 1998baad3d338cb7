// SPDX-License-Identifier: GPL-2.0-or-later
// A job's goodput model as sched/pollux sees it: built from the job's
// validated hint (pollux/hint.h), or absent when the job has published no
// fitted model yet, in which case its speedup is taken as linear.
#ifndef POLLUX_SCHED_JOB_MODEL_H
#define POLLUX_SCHED_JOB_MODEL_H

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "elastic.h"
#include "job_comment.h"
#include "pollux/hint.h"
#include "pollux/speedup.h"

namespace pollux::sched {

struct JobModel {
  std::shared_ptr<const SpeedupFunction> speedup;
  PerfParams perf;  ///< the throughput fit the speedup is built from
  GradStats grad;
  BatchLimits limits;
  /// The GPU type `perf` was measured on, in the agent's words (hint
  /// gpu_type; empty: unknown), and the job's fits on other types it ran
  /// on before (hint type_perf): gpu_types.h maps them onto Slurm's types.
  std::string gpu_type;
  std::vector<std::pair<std::string, PerfParams>> type_perf;
  /// The most GPUs that can share the batch: floor(M_max / m_min).
  int max_gpus_by_batch() const noexcept;
};

/// The model a hint describes; nullopt (and `why_none`) when the hint has
/// no throughput parameters or gradient statistics yet, or they admit no
/// valid configuration on one GPU.
std::optional<JobModel> model_from_hint(const Hint& hint, std::string* why_none = nullptr);

/// The model of one throughput fit with the job's gradient statistics and
/// limits; nullopt when they admit no valid configuration on one GPU.
std::optional<JobModel> model_from_fit(const PerfParams& perf, const GradStats& grad, const BatchLimits& limits);

/// The model's speedup at every size, uniform or not; empty (linear) without
/// a model.
SpeedupFn model_speedup(const std::optional<JobModel>& model);

/// The speedup function the policy sees for a job: the model's (linear
/// without one), and 0 for sizes the job's range forbids (node count
/// outside MIN..MAX, more GPUs per node than requested, or GPUs not evenly
/// spread over the nodes).
SpeedupFn range_speedup(const std::optional<JobModel>& model, const ElasticRange& range);

/// `fn` (linear when empty) restricted to the sizes `range` allows, as range_speedup.
SpeedupFn within_range(SpeedupFn fn, const ElasticRange& range);

/// The view of a job at `nodes` x `gpus_per_node`: goodput, efficiency,
/// speedup, batch and accumulation the agent will pick there.
JobView view_at(const std::optional<JobModel>& model, int nodes, int gpus_per_node);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_MODEL_H

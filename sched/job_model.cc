// SPDX-License-Identifier: GPL-2.0-or-later
// Hint -> goodput model (see job_model.h).
#include "job_model.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

#include "pollux/efficiency.h"

namespace pollux::sched {

int JobModel::max_gpus_by_batch() const noexcept {
  const double cap = std::floor(limits.max_batch / std::max(1, limits.min_atomic));
  return cap >= INT_MAX ? INT_MAX : std::max(1, static_cast<int>(cap));
}

std::optional<JobModel> model_from_hint(const Hint& hint, std::string* why_none) {
  auto none = [why_none](const char* why) -> std::optional<JobModel> {
    if (why_none != nullptr) *why_none = why;
    return std::nullopt;
  };
  if (!hint.perf) return none("no throughput parameters yet");
  if (!hint.grad) return none("no gradient statistics yet");
  std::optional<JobModel> m = model_from_fit(*hint.perf, *hint.grad, hint.limits);
  if (!m) return none("no valid batch configuration on one GPU");
  m->gpu_type = hint.gpu_type;
  for (const HintTypePerf& t : hint.type_perf) m->type_perf.emplace_back(t.gpu_type, t.perf);
  return m;
}

std::optional<JobModel> model_from_fit(const PerfParams& perf, const GradStats& grad, const BatchLimits& limits) {
  try {
    JobModel m;
    m.perf = perf;
    m.grad = grad;
    m.limits = limits;
    m.speedup = std::make_shared<const SpeedupFunction>(GoodputModel(perf, grad, limits.init_batch), limits);
    return m;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

SpeedupFn model_speedup(const std::optional<JobModel>& model) {
  if (!model || !model->speedup) return {};
  return [fn = model->speedup](int nodes, int replicas) { return (*fn)(nodes, replicas); };
}

SpeedupFn range_speedup(const std::optional<JobModel>& model, const ElasticRange& range) {
  return within_range(model_speedup(model), range);
}

SpeedupFn within_range(SpeedupFn fn, const ElasticRange& range) {
  return [fn = std::move(fn), range](int nodes, int replicas) -> double {
    if (nodes <= 0 || replicas <= 0 || replicas % nodes != 0) return 0.0;
    if (!range.allows(nodes, replicas / nodes)) return 0.0;
    return fn ? fn(nodes, replicas) : static_cast<double>(replicas);
  };
}

JobView view_at(const std::optional<JobModel>& model, int nodes, int gpus_per_node) {
  JobView v;
  v.nodes = nodes;
  v.gpus = nodes * gpus_per_node;
  if (v.gpus <= 0) return v;
  if (!model) {
    v.speedup = v.gpus;
    return v;
  }
  const GoodputModel& gm = model->speedup->model();
  const BatchConfig cfg = gm.optimize(nodes, v.gpus, model->limits);
  v.has_model = true;
  v.goodput = cfg.goodput;
  v.batch = cfg.total_batch(v.gpus);
  v.micro_steps = cfg.accum_steps + 1;
  v.efficiency = v.batch > 0 ? gm.efficiency(static_cast<double>(v.batch)) : 0.0;
  v.speedup = (*model->speedup)(nodes, v.gpus);
  const double gns = gradient_noise_scale(model->grad, model->limits.init_batch);
  v.noise_scale = std::isfinite(gns) ? gns : 0.0;
  return v;
}

}  // namespace pollux::sched

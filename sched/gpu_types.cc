// SPDX-License-Identifier: GPL-2.0-or-later
// GPU types and per-type job models (see gpu_types.h).
#include "gpu_types.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <tuple>

#include "pollux/gpu_type.h"
#include "pollux/throughput.h"

namespace pollux::sched {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `fn` (linear when empty) at the sizes the round's rules count: the
// range's uniform ones, or every one.
SpeedupFn sized(SpeedupFn fn, const ElasticRange& range, bool uniform_placements) {
  if (uniform_placements) return within_range(std::move(fn), range);
  if (fn) return fn;
  return [](int, int replicas) { return static_cast<double>(replicas); };
}

}  // namespace

GpuTypes group_gpu_types(const std::vector<std::string>& node_types) {
  GpuTypes out;
  out.names = node_types;
  std::sort(out.names.begin(), out.names.end());
  out.names.erase(std::unique(out.names.begin(), out.names.end()), out.names.end());
  for (const std::string& t : node_types)
    out.of_node.push_back(static_cast<int>(std::lower_bound(out.names.begin(), out.names.end(), t) - out.names.begin()));
  return out;
}

int match_gpu_type(std::string_view hint_type, const std::vector<std::string>& types) {
  const std::string reported = normalize_gpu_type(hint_type);
  if (reported.empty()) return -1;
  int best = -1;
  std::size_t best_len = 0;
  for (std::size_t t = 0; t < types.size(); ++t) {
    if (!gpu_type_matches(types[t], reported)) continue;
    const std::size_t len = normalize_gpu_type(types[t]).size();
    if (len > best_len) {
      best = static_cast<int>(t);
      best_len = len;
    }
  }
  return best;
}

std::vector<double> type_speed_seed(const std::vector<std::string>& types, const GpuTypeSpeeds& speeds) {
  std::vector<double> out(types.size(), 1.0);
  for (std::size_t t = 0; t < types.size(); ++t)
    for (const auto& [name, speed] : speeds)
      if (lower(name) == lower(types[t])) out[t] = speed;
  return out;
}

std::vector<bool> type_speed_known(const std::vector<std::string>& types, const GpuTypeSpeeds& speeds) {
  std::vector<bool> out(types.size(), false);
  for (std::size_t t = 0; t < types.size(); ++t)
    for (const auto& speed : speeds)
      if (lower(speed.first) == lower(types[t])) out[t] = true;
  return out;
}

TypeRatios seeded_type_ratios(const std::vector<std::string>& types, const GpuTypeSpeeds& speeds) {
  if (types.empty()) return TypeRatios({1.0});
  return TypeRatios(type_speed_seed(types, speeds), type_speed_known(types, speeds));
}

std::vector<std::optional<PerfParams>> fits_by_type(const std::optional<JobModel>& model,
                                                    const std::vector<std::string>& types, int running_type) {
  std::vector<std::optional<PerfParams>> out(types.size());
  if (!model) return out;
  for (const auto& [name, perf] : model->type_perf) {
    const int t = match_gpu_type(name, types);
    if (t >= 0 && perf.valid()) out[static_cast<std::size_t>(t)] = perf;
  }
  int own = match_gpu_type(model->gpu_type, types);
  if (own < 0) own = running_type;
  if (own >= 0 && static_cast<std::size_t>(own) < types.size()) out[static_cast<std::size_t>(own)] = model->perf;
  return out;
}

TypedJobModel typed_job_model(const std::optional<JobModel>& model, const ElasticRange& range,
                              const std::vector<std::string>& types, int running_type, const TypeRatios& ratios,
                              bool uniform_placements) {
  TypedJobModel out;
  const std::size_t n = types.size();
  out.models.resize(n);
  out.sources.assign(n, TypeModelSource::kNone);
  out.speedups.resize(n);
  const std::vector<std::optional<PerfParams>> fits = fits_by_type(model, types, running_type);
  // A model measured on no type the job can be placed by (a hint without
  // gpu_type, pending): its speedup on every type, as untyped.
  const bool placed = std::any_of(fits.begin(), fits.end(), [](const auto& f) { return f.has_value(); });
  std::optional<TypedGoodput> typed;
  try {
    if (static_cast<int>(n) == ratios.types() && (placed || !model))
      typed.emplace(fits, model ? model->grad : GradStats{}, model ? model->limits : BatchLimits{}, ratios);
  } catch (const std::invalid_argument&) {
    typed.reset();  // limits a hint can never carry (validated): as untyped
  }
  if (!typed) {
    const SpeedupFn own = model_speedup(model);
    for (std::size_t t = 0; t < n; ++t) out.speedups[t] = sized(own, range, uniform_placements);
    return out;
  }
  if (!model) {  // linear, scaled by the types' speeds
    const std::vector<SpeedupFn> fns = typed->speedups();
    for (std::size_t t = 0; t < n; ++t)
      if (fns[t]) out.speedups[t] = sized(fns[t], range, uniform_placements);
    return out;
  }
  // With a model: one SpeedupFunction per type, shared by the policy's
  // speedup and the view (the hint's own where it was measured: memoised
  // across rounds), each scaled to the one base as TypedGoodput::speedups()
  // does, so that a round builds no model twice.
  const double base = typed->base_goodput();
  for (std::size_t t = 0; t < n; ++t) {
    const int ti = static_cast<int>(t);
    out.sources[t] = typed->source(ti);
    if (out.sources[t] == TypeModelSource::kNone || !(base > 0)) continue;
    out.models[t] = typed->perf(ti) == model->perf
                        ? model
                        : model_from_fit(typed->perf(ti), model->grad, model->limits);
    if (!out.models[t]) continue;  // no valid configuration on one GPU of this type
    std::shared_ptr<const SpeedupFunction> fn = out.models[t]->speedup;
    const double f = fn->base_goodput() / base;
    out.speedups[t] =
        sized([fn, f](int nodes, int replicas) { return (*fn)(nodes, replicas) * f; }, range, uniform_placements);
  }
  return out;
}

const TypeRatios& TypeSpeedLearner::ratios(const std::vector<std::string>& types, const GpuTypeSpeeds& speeds) {
  if (!ratios_ || types != types_ || speeds != speeds_) {
    // What was learnt so far (or restored) is carried over by type name:
    // an observation is a measurement between two named types and does
    // not depend on the seed.
    const bool restoring = pending_.has_value();
    std::optional<LearntTypeSpeeds> before;
    if (restoring) before = std::move(pending_);
    else if (ratios_) before = learnt();
    pending_.reset();
    types_ = types;
    speeds_ = speeds;
    seed_ = types.empty() ? std::vector<double>{1.0} : type_speed_seed(types, speeds);
    ratios_.emplace(seeded_type_ratios(types, speeds));
    seen_.clear();
    changed_ = true;
    const bool carried = before && carry(*before);
    if (restoring) restored_ = carried;
  }
  return *ratios_;
}

bool TypeSpeedLearner::carry(const LearntTypeSpeeds& from) {
  // Index in types_ of each of from's types; -1: gone.
  std::vector<int> to(from.types.size(), -1);
  for (std::size_t i = 0; i < from.types.size(); ++i) {
    const auto it = std::lower_bound(types_.begin(), types_.end(), from.types[i]);
    if (it != types_.end() && *it == from.types[i]) to[i] = static_cast<int>(it - types_.begin());
  }
  // Both type lists are sorted (learnt() and the file's parser promise
  // it), so a pair a < b keeps its order; one that does not is dropped.
  const auto remap = [&](int a, int b) -> std::optional<std::pair<int, int>> {
    if (a < 0 || b < 0 || static_cast<std::size_t>(a) >= to.size() || static_cast<std::size_t>(b) >= to.size() ||
        to[a] < 0 || to[b] <= to[a])
      return std::nullopt;
    return std::pair{to[a], to[b]};
  };
  bool any = false;
  for (const LearntTypeSpeeds::Pair& p : from.pairs)
    if (const auto m = remap(p.a, p.b)) {
      ratios_->add_observations(m->first, m->second, p.count, p.log_sum);
      any = any || ratios_->observations(m->first, m->second) > 0;  // a bad count or sum is ignored
    }
  const std::size_t n = types_.size();
  for (const LearntTypeSpeeds::Seen& s : from.seen)
    if (const auto m = remap(s.a, s.b)) {
      std::vector<bool>& seen = seen_[s.job];
      seen.resize(n * n, false);
      seen[static_cast<std::size_t>(m->first) * n + static_cast<std::size_t>(m->second)] = true;
      any = true;
    }
  return any || (from.types == types_);
}

void TypeSpeedLearner::learn(std::uint32_t job_id, const std::vector<std::optional<PerfParams>>& fits,
                             const BatchLimits& limits) {
  if (!ratios_ || static_cast<int>(fits.size()) != ratios_->types()) return;
  if (observe_fits(*ratios_, fits, std::max(1, limits.min_atomic), seen_[job_id])) changed_ = true;
}

void TypeSpeedLearner::forget_others(std::vector<std::uint32_t> alive) {
  // Sorted once: a round of thousands of jobs is not a quadratic scan.
  std::sort(alive.begin(), alive.end());
  for (auto it = seen_.begin(); it != seen_.end();) {
    if (std::binary_search(alive.begin(), alive.end(), it->first)) {
      ++it;
      continue;
    }
    // Only a job with a pair observed is in learnt().
    if (std::find(it->second.begin(), it->second.end(), true) != it->second.end()) changed_ = true;
    it = seen_.erase(it);
  }
}

LearntTypeSpeeds TypeSpeedLearner::learnt() const {
  LearntTypeSpeeds out;
  if (!ratios_) return out;
  out.types = types_;
  out.seed = seed_;
  const int n = ratios_->types();
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (ratios_->observations(a, b) > 0)
        out.pairs.push_back({a, b, ratios_->observations(a, b), ratios_->log_ratio_sum(a, b)});
  for (const auto& [job, seen] : seen_)
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (seen.size() == static_cast<std::size_t>(n * n) && seen[static_cast<std::size_t>(a * n + b)])
          out.seen.push_back({job, a, b});
  std::sort(out.seen.begin(), out.seen.end(), [](const LearntTypeSpeeds::Seen& x, const LearntTypeSpeeds::Seen& y) {
    return std::tie(x.job, x.a, x.b) < std::tie(y.job, y.a, y.b);
  });
  return out;
}

void TypeSpeedLearner::restore(LearntTypeSpeeds learnt) { pending_ = std::move(learnt); }

std::optional<bool> TypeSpeedLearner::take_restored() { return std::exchange(restored_, std::nullopt); }

bool TypeSpeedLearner::take_changed() { return std::exchange(changed_, false); }

}  // namespace pollux::sched

// A job's goodput per GPU type (see pollux/typed_goodput.h).
#include "pollux/typed_goodput.h"

#include "pollux/throughput.h"

#include <cmath>
#include <memory>
#include <stdexcept>

namespace pollux {

TypeRatios::TypeRatios(std::vector<double> seed, std::vector<bool> known)
    : seed_(std::move(seed)), known_(std::move(known)) {
  if (seed_.empty()) throw std::invalid_argument("TypeRatios: no GPU type");
  if (known_.empty()) known_.assign(seed_.size(), true);
  if (known_.size() != seed_.size()) throw std::invalid_argument("TypeRatios: one 'known' flag per GPU type expected");
  for (double s : seed_)
    if (!std::isfinite(s) || s <= 0) throw std::invalid_argument("TypeRatios: a speed must be finite and positive");
  log_sum_.assign(seed_.size() * seed_.size(), 0.0);
  count_.assign(seed_.size() * seed_.size(), 0);
}

double TypeRatios::grad_time_ratio(int from, int to) const noexcept {
  if (from < 0 || to < 0 || from >= types() || to >= types()) return 1.0;
  const std::size_t k = static_cast<std::size_t>(from) * seed_.size() + static_cast<std::size_t>(to);
  const double prior = std::log(seed_[from] / seed_[to]);  // T_to / T_from = speed_from / speed_to
  return std::exp((prior + log_sum_[k]) / (1.0 + count_[k]));
}

bool TypeRatios::explored(int a, int b) const noexcept {
  if (a < 0 || b < 0 || a >= types() || b >= types() || a == b) return true;
  return known_[a] || known_[b] || observations(a, b) > 0;
}

double TypeRatios::estimate_ratio(int from, int to) const noexcept {
  const double r = grad_time_ratio(from, to);
  return explored(from, to) ? r : r / kExploreSpeedup;
}

bool observe_fits(TypeRatios& ratios, const std::vector<std::optional<PerfParams>>& fits, double micro_batch,
                  std::vector<bool>& seen) {
  if (static_cast<int>(fits.size()) != ratios.types()) return false;
  const std::size_t n = fits.size();
  seen.resize(n * n, false);
  bool told = false;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      if (!fits[a] || !fits[b] || seen[a * n + b]) continue;
      ratios.observe(static_cast<int>(a), static_cast<int>(b), predict_grad_time(*fits[a], micro_batch),
                     predict_grad_time(*fits[b], micro_batch));
      seen[a * n + b] = true;
      told = true;
    }
  return told;
}

void TypeRatios::observe(int a, int b, double grad_time_a, double grad_time_b) noexcept {
  if (!(std::isfinite(grad_time_a) && std::isfinite(grad_time_b) && grad_time_a > 0 && grad_time_b > 0)) return;
  add_observations(a, b, 1, std::log(grad_time_b / grad_time_a));
}

void TypeRatios::add_observations(int a, int b, int count, double log_sum) noexcept {
  if (a < 0 || b < 0 || a >= types() || b >= types() || a == b || count < 1 || !std::isfinite(log_sum)) return;
  const std::size_t n = seed_.size();
  log_sum_[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] += log_sum;
  log_sum_[static_cast<std::size_t>(b) * n + static_cast<std::size_t>(a)] -= log_sum;
  count_[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] += count;
  count_[static_cast<std::size_t>(b) * n + static_cast<std::size_t>(a)] += count;
}

int TypeRatios::observations(int a, int b) const noexcept {
  if (a < 0 || b < 0 || a >= types() || b >= types()) return 0;
  return count_[static_cast<std::size_t>(a) * seed_.size() + static_cast<std::size_t>(b)];
}

double TypeRatios::log_ratio_sum(int a, int b) const noexcept {
  if (a < 0 || b < 0 || a >= types() || b >= types()) return 0;
  return log_sum_[static_cast<std::size_t>(a) * seed_.size() + static_cast<std::size_t>(b)];
}

TypedGoodput::TypedGoodput(const std::vector<std::optional<PerfParams>>& fitted, const GradStats& grad,
                           const BatchLimits& limits, const TypeRatios& ratios, const std::vector<int>& samples)
    : perf_(fitted.size()), source_(fitted.size(), TypeModelSource::kNone), grad_(grad), limits_(limits) {
  if (static_cast<int>(fitted.size()) != ratios.types())
    throw std::invalid_argument("TypedGoodput: one fit slot per GPU type expected");
  if (!limits.valid()) throw std::invalid_argument("TypedGoodput: invalid batch limits");
  // The fitted type the estimates start from.
  int from = -1;
  for (int t = 0; t < types(); ++t) {
    if (!fitted[t]) continue;
    const int w = t < static_cast<int>(samples.size()) ? samples[t] : 0;
    const int best = from >= 0 && from < static_cast<int>(samples.size()) ? samples[from] : 0;
    if (from < 0 || w > best) from = t;
  }
  for (int t = 0; t < types(); ++t) {
    speed_.push_back(1.0 / ratios.grad_time_ratio(0, t));
    if (fitted[t]) {
      perf_[t] = *fitted[t];
      source_[t] = TypeModelSource::kFitted;
    } else if (from >= 0) {
      PerfParams p = *fitted[from];
      const double r = ratios.estimate_ratio(from, t);
      p.alpha_c *= r;
      p.beta_c *= r;
      perf_[t] = p;
      source_[t] = TypeModelSource::kEstimated;
    }
  }
  for (int t = 0; t < types(); ++t) {
    const double g = goodput(t, 1, 1);
    if (g > base_) {
      base_ = g;
      best_type_ = t;
    }
  }
  if (from < 0)
    for (int t = 0; t < types(); ++t)
      if (speed_[t] > speed_[best_type_]) best_type_ = t;
}

double TypedGoodput::goodput(int type, int nodes, int replicas) const {
  if (type < 0 || type >= types() || source_[type] == TypeModelSource::kNone) return 0.0;
  return GoodputModel(perf_[type], grad_, limits_.init_batch).optimize(nodes, replicas, limits_).goodput;
}

std::vector<SpeedupFn> TypedGoodput::speedups() const {
  std::vector<SpeedupFn> out(perf_.size());
  if (base_ <= 0) {
    if (source_.empty() || source_[0] != TypeModelSource::kNone) return out;  // models, none valid
    const double fastest = speed_[best_type_];
    for (int t = 0; t < types(); ++t) {
      const double f = speed_[t] / fastest;
      out[t] = [f](int nodes, int replicas) { return nodes > 0 && replicas > 0 ? f * replicas : 0.0; };
    }
    return out;
  }
  for (int t = 0; t < types(); ++t) {
    if (source_[t] == TypeModelSource::kNone) continue;
    std::shared_ptr<SpeedupFunction> fn;
    try {
      fn = std::make_shared<SpeedupFunction>(GoodputModel(perf_[t], grad_, limits_.init_batch), limits_);
    } catch (const std::invalid_argument&) {
      continue;  // no valid configuration on one GPU of this type
    }
    const double f = fn->base_goodput() / base_;
    out[t] = [fn, f](int nodes, int replicas) { return (*fn)(nodes, replicas) * f; };
  }
  return out;
}

}  // namespace pollux

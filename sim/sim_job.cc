// One simulated job and its agent (see sim_job.h).
#include "sim_job.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pollux/efficiency.h"
#include "pollux/goodput.h"

namespace pollux::sim {
namespace {

bool same(const PerfParams& a, const PerfParams& b) { return a.to_array() == b.to_array(); }
bool same(const GradStats& a, const GradStats& b) { return a.sqr == b.sqr && a.var == b.var; }

}  // namespace

SimJob::SimJob(std::string name, double submit_time, StepTimeCache& steps, long long fixed_batch, int model_slots)
    : name_(std::move(name)), submit_time_(submit_time), steps_(&steps), base_steps_(&steps), fixed_batch_(fixed_batch),
      slots_(static_cast<std::size_t>(std::max(model_slots, 1))) {}

SimJob::SimJob(std::string name, double submit_time, double duration)
    : name_(std::move(name)), submit_time_(submit_time), duration_(duration), steps_(nullptr), base_steps_(nullptr),
      fixed_batch_(0), slots_(1) {}

int SimJob::gpus() const noexcept { return std::accumulate(placement_.begin(), placement_.end(), 0); }

long long SimJob::batch_size() const noexcept {
  return placement_.empty() ? 0 : static_cast<long long>(gpus()) * atomic_bsz_ * (accum_steps_ + 1);
}

void SimJob::step(double seconds, double interference) {
  if (placement_.empty()) {
    current_time_ += seconds;
    return;
  }
  if (recorded()) {  // progress_: seconds run after the stall
    const double delay = std::min(rescale_time_, seconds);
    rescale_time_ -= delay;
    current_time_ += delay;
    attained_service_ += delay * gpus();
    seconds -= delay;
    if (!complete()) {
      const double run = std::min(seconds, duration_ - progress_);
      progress_ += run;
      attained_service_ += run * gpus();
      if (progress_ >= duration_) completion_time_ = current_time_ + run;
    }
    current_time_ += seconds;
    return;
  }
  if (trained_time_) {  // ending (end delay): holding its GPUs, nothing left to train
    if (!complete()) {
      const double end = *trained_time_ + end_delay_;
      attained_service_ += std::max(0.0, std::min(seconds, end - current_time_)) * gpus();
      if (current_time_ + seconds >= end) completion_time_ = end;
    }
    current_time_ += seconds;
    return;
  }
  const Application& a = app();
  const int replicas = gpus();
  const int nodes = static_cast<int>(placement_.size());
  const double delay = std::min(rescale_time_, seconds);
  current_time_ += delay;
  attained_service_ += delay * replicas;
  rescale_time_ -= delay;
  seconds -= delay;
  while (seconds > 0 && !complete()) {
    StepTimes t = steps_->get(placement_, atomic_bsz_);
    t.step = t.sync + (t.step - t.sync) / speed_;
    const Iteration it = a.iteration(t, replicas, atomic_bsz_, accum_steps_, epoch_);
    grad_ = it.grad;
    add_profile(nodes, replicas, atomic_bsz_, t);
    const double rate = it.gain / it.seconds * (1.0 - interference) / slowdown_;  // progress per second
    const double next = a.epoch_progress(epoch_ + 1);
    if (progress_ + rate * seconds < next) {
      progress_ += rate * seconds;
      current_time_ += seconds;
      attained_service_ += seconds * replicas;
      seconds = 0;
    } else {
      ++epoch_;
      // Whole seconds, rounded half to even as the artifact's round() does.
      const double delta = std::nearbyint((next - progress_) / rate);
      epoch_ends_.push_back(current_time_ + delta);
      progress_ = next;
      current_time_ += delta;
      attained_service_ += delta * replicas;
      seconds -= delta;
      if (epoch_ >= a.last_epoch(last_epoch_)) {
        if (end_delay_ <= 0) {
          completion_time_ = current_time_;
        } else {  // it ends end_delay_ later, holding its GPUs
          trained_time_ = current_time_;
          const double run = std::min(std::max(seconds, 0.0), end_delay_);
          attained_service_ += run * replicas;
          if (run >= end_delay_) completion_time_ = current_time_ + end_delay_;
          current_time_ += seconds;
          return;
        }
      }
    }
    update_local_bsz();
  }
  current_time_ += seconds;
}

void SimJob::reallocate(const std::vector<int>& placement, double restart_delay, int slot, double speed,
                        StepTimeCache* steps) {
  steps_ = steps != nullptr ? steps : base_steps_;
  slot_ = std::clamp(slot, 0, model_slots() - 1);
  speed_ = speed > 0 ? speed : 1.0;
  placement_.clear();
  for (int c : placement)
    if (c > 0) placement_.push_back(c);
  if (placement_.empty()) {
    atomic_bsz_ = 0;
    return;
  }
  if (trained_time_) return;  // ending: nothing left to restart (its GPUs are as placed until its end)
  if (!recorded()) update_local_bsz();
  rescale_time_ = restart_delay;
  measures_.restart_seconds = restart_delay;
  run_start_ = current_time_;
  restarts_ = restarts_ < 0 ? 0 : restarts_ + 1;
}

void SimJob::update_local_bsz() {
  const Application& a = app();
  const int replicas = gpus();
  const int nodes = static_cast<int>(placement_.size());
  double batch = static_cast<double>(fixed_batch_);
  if (batch <= 0 && !perf_params()) batch = std::max(a.init_batch(), double(a.min_local_bsz()) * replicas);
  if (batch <= 0) {
    const BatchConfig c = GoodputModel(*perf_params(), *grad_, a.init_batch()).optimize(nodes, replicas, a.limits());
    if (c.goodput > 0) {
      atomic_bsz_ = c.atomic_batch;
      accum_steps_ = c.accum_steps;
    } else {  // no valid configuration (cannot happen within max_replicas): the smallest batch
      batch = std::max(a.init_batch(), double(a.min_local_bsz()) * replicas);
    }
  }
  if (batch > 0) {
    const BatchConfig c = a.split_batch(batch, replicas, batch > a.init_batch());
    atomic_bsz_ = c.atomic_batch;
    accum_steps_ = c.accum_steps;
  }
  atomic_bsz_ = a.cap_atomic(atomic_bsz_, replicas, accum_steps_);
}

void SimJob::add_profile(int nodes, int replicas, int atomic, const StepTimes& t) {
  Slot& s = slots_[static_cast<std::size_t>(slot_)];
  if (!s.keys.emplace(std::make_tuple(nodes, replicas, atomic), true).second) return;
  s.profile.push_back(ProfileSample{nodes, replicas, double(atomic), t.step - t.sync, t.step});
  measures_.max_profiled_replicas = std::max(measures_.max_profiled_replicas, replicas);
  s.stale = true;
}

const std::optional<PerfParams>& SimJob::perf_params(int slot) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  if (s.stale) {
    s.perf = fit_perf_params(s.profile, FitOptions::paper()).params;  // the artifact's agent
    ++fits_;
    s.stale = false;
  }
  return s.perf;
}

std::vector<SpeedupFn> SimJob::typed_speedups(const TypeRatios& ratios) {
  std::vector<std::optional<PerfParams>> fitted;
  std::vector<int> samples;
  for (int t = 0; t < model_slots(); ++t) {
    fitted.push_back(perf_params(t));
    samples.push_back(static_cast<int>(slots_[static_cast<std::size_t>(t)].profile.size()));
  }
  const Application& a = app();
  const GradStats g = grad_ ? *grad_ : GradStats{0.0, 1.0};
  return TypedGoodput(fitted, g, a.limits(), ratios, samples).speedups();
}

std::shared_ptr<const SpeedupFunction> SimJob::speedup_function() {
  const std::optional<PerfParams>& perf = perf_params();
  if (!perf || !grad_) return nullptr;
  if (speedup_ == nullptr || !same(speedup_perf_, *perf) || !same(speedup_grad_, *grad_)) {
    speedup_ = std::make_shared<SpeedupFunction>(GoodputModel(*perf, *grad_, app().init_batch()), app().limits());
    speedup_perf_ = *perf;
    speedup_grad_ = *grad_;
  }
  return speedup_;
}

SpeedupFn SimJob::speedup_fn() {
  std::shared_ptr<const SpeedupFunction> f = speedup_function();
  if (f == nullptr) return {};
  return [f](int nodes, int replicas) { return (*f)(nodes, replicas); };
}

}  // namespace pollux::sim

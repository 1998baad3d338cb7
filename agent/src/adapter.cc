// Rank 0's adaptation worker (see adapter.h).
#include "adapter.h"

#include <exception>

#include "log.h"

namespace pollux::agent_detail {

Adapter::Adapter(std::string spool_dir, int rank, int verbose)
    : spool_dir_(std::move(spool_dir)), rank_(rank), verbose_(verbose), thread_([this] { run(); }) {}

Adapter::~Adapter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Adapter::submit(AdaptRequest request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A replaced request's refit/propose must not be lost.
    if (pending_) {
      request.refit |= pending_->refit;
      if (pending_->propose > request.propose) request.propose = pending_->propose;
    }
    pending_ = std::move(request);
    ++submitted_;
  }
  cv_.notify_all();
}

std::string Adapter::flush() {
  std::unique_lock<std::mutex> lock(mu_);
  const long long target = submitted_;
  cv_.wait(lock, [&] { return done_ >= target; });
  return write_error_;
}

std::optional<Proposal> Adapter::take_proposal() {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Proposal> p = proposal_;
  proposal_.reset();
  return p;
}

std::optional<PerfParams> Adapter::perf() const {
  std::lock_guard<std::mutex> lock(mu_);
  return perf_;
}

void Adapter::set_perf(const PerfParams& perf) {
  std::lock_guard<std::mutex> lock(mu_);
  perf_ = perf;
}

void Adapter::set_sharded(bool sharded) {
  std::lock_guard<std::mutex> lock(mu_);
  sharded_ = sharded;
}

void Adapter::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || pending_.has_value(); });
    if (!pending_) return;  // stopping, nothing left
    AdaptRequest req = std::move(*pending_);
    pending_.reset();
    const long long generation = submitted_;
    lock.unlock();
    process(req);
    lock.lock();
    done_ = generation;
    cv_.notify_all();
  }
}

void Adapter::process(AdaptRequest& req) {
  Hint& h = req.hint;
  std::optional<PerfParams> perf = this->perf();
  if (req.refit && !h.profile.empty()) {
    try {
      FitOptions options;
      {
        std::lock_guard<std::mutex> lock(mu_);
        options.sharded = sharded_;
      }
      const FitResult fit = fit_perf_params(h.profile, options);
      if (fit.params.valid()) {
        perf = fit.params;
        set_perf(*perf);
        if (verbose_ >= 2)
          log(rank_, "fit of %zu samples%s: alpha_c=%.3g beta_c=%.3g alpha_r=%.3g beta_r=%.3g alpha_n=%.3g gamma=%.3g alpha_1=%.3g (%s)",
              h.profile.size(), perf->sharded ? " (sharded)" : "", perf->alpha_c, perf->beta_c, perf->alpha_r,
              perf->beta_r, perf->alpha_n, perf->gamma, perf->alpha_1, fit.status.c_str());
      }
    } catch (const std::exception& e) {
      log(rank_, "throughput fit failed: %s", e.what());
    }
  }
  if (req.propose != AdaptRequest::Propose::kNo && perf && h.grad) {
    const GoodputModel model(*perf, *h.grad, h.limits.init_batch);
    const BatchConfig best = model.optimize(h.config.nodes, h.config.replicas, h.limits);
    const double current =
        model.goodput(h.config.nodes, h.config.replicas, h.config.atomic_batch, h.config.accum_steps);
    const bool differs = best.atomic_batch != h.config.atomic_batch || best.accum_steps != h.config.accum_steps;
    const bool better = req.propose == AdaptRequest::Propose::kAlways || best.goodput > current * (1 + kHysteresis);
    if (best.goodput > 0 && differs && better) {
      std::lock_guard<std::mutex> lock(mu_);
      proposal_ = Proposal{best.atomic_batch, best.accum_steps, best.goodput, h.config};
    }
  }
  if (spool_dir_.empty()) return;
  h.perf = perf;
  const std::string err = write_hint_file(spool_dir_, h);
  if (err != last_write_error_) {
    // Log a failure once, and its end.
    if (!err.empty()) log(rank_, "cannot write the hint (the scheduler will see no model): %s", err.c_str());
    else log(rank_, "hint file written again: %s", hint_path(spool_dir_, h.job_id).c_str());
    last_write_error_ = err;
  }
  std::lock_guard<std::mutex> lock(mu_);
  write_error_ = err;
}

}  // namespace pollux::agent_detail

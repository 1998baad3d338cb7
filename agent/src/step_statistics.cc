// What the agent learns of the job from its steps (see step_statistics.h).
#include "step_statistics.h"

#include <algorithm>

#include "log.h"
#include "pollux/efficiency.h"
#include "step_packet.h"

namespace pollux::agent_detail {

StepStatistics::StepStatistics(const AgentOptions& options)
    : opt_(options),
      estimator_(options.limits.init_batch, options.smoothing),
      profile_(kHintMaxSamples),
      gpu_type_(reported_gpu_type(options)) {}

void StepStatistics::contribute(const StepRecord& rec, double* packet) {
  if (!rec.valid) return;
  packet[kValid] = 1;
  packet[kLocalSqr] = rec.local_sqr_sum;
  packet[kMicroSteps] = rec.micro_steps;
  packet[kLocalGrads] = rec.local_grads > 0 ? rec.local_grads : rec.micro_steps;
  packet[kGradTime] = rec.grad_time_sum;
  packet[kStepTime] = rec.step_time;
}

StepStatistics::ProfileNews StepStatistics::absorb(const double* packet, const StepRecord& rec, const Context& c,
                                                   int nodes, int replicas) {
  if (packet[kValid] != replicas || !rec.valid || c.skipped) return ProfileNews::kNone;
  const double n = packet[kMicroSteps];
  const double step_batch = static_cast<double>(replicas) * c.atomic * (c.accum + 1);
  if (c.two_step) {
    if (rec.has_prev) {
      const double mean_sqr = 0.25 * (rec.prev_sqr + rec.sync_sqr + 2 * rec.dot_prev);
      estimator_.update_two_step(rec.prev_sqr, rec.sync_sqr, mean_sqr, step_batch);
    }
  } else {
    // Each local gradient is the mean over step_batch / grads examples.
    const double grads = packet[kLocalGrads];
    estimator_.update(packet[kLocalSqr] / grads, rec.sync_sqr, static_cast<int>(grads), step_batch / grads);
  }
  if (!c.profiled) return ProfileNews::kNone;
  const bool matured = profile_.add(nodes, replicas, c.atomic, packet[kGradTime] / n, packet[kStepTime] / replicas,
                                    opt_.min_profile_steps);
  return matured ? ProfileNews::kMatured : ProfileNews::kSample;
}

double StepStatistics::gain(long long total_batch) const {
  return estimator_.has_estimate()
             ? adascale_gain(estimator_.stats(), static_cast<double>(total_batch), opt_.limits.init_batch)
             : 1.0;
}

void StepStatistics::describe(Hint& h, int replicas) const {
  if (estimator_.has_estimate()) h.grad = estimator_.stats();
  h.gpu_type = gpu_type_;
  h.type_perf = type_perf_;
  h.profile = profile_.samples();
  h.max_profiled_replicas = std::max(profile_.max_replicas(), replicas);
}

void StepStatistics::save(AgentState& s) const {
  s.estimator_init_batch = estimator_.init_batch();
  s.estimator = estimator_.state();
  s.gpu_type = gpu_type_;
  s.profile = profile_.entries();
  s.type_perf = type_perf_;
  s.type_profiles = type_profiles_;
}

void StepStatistics::restore(AgentState& s, const std::string& dir, int rank) {
  if (s.estimator_init_batch == opt_.limits.init_batch) {
    if (!estimator_.restore(s.estimator) && rank == 0)
      log(rank, "the gradient statistics in %s are not valid: they start afresh", dir.c_str());
  } else if (rank == 0) {
    log(rank, "initial batch changed from %g to %g: gradient statistics start afresh", s.estimator_init_batch,
        opt_.limits.init_batch);
  }
  const std::string ran_on = s.gpu_type;
  if (switch_gpu_type(s, gpu_type_) && rank == 0 && opt_.verbose >= 1)
    log(rank, "the checkpoint was taken on GPU type %s, this run is on %s: %s, the fit on %s kept",
        ran_on.c_str(), gpu_type_.empty() ? "an unknown type" : gpu_type_.c_str(),
        s.perf ? (s.profile.empty() ? "this type's earlier fit resumes with a new profile"
                                    : "this type's earlier fit and profile resume")
               : "a new profile and fit for this type",
        ran_on.c_str());
  profile_.assign(s.profile);
  type_perf_ = s.type_perf;
  type_profiles_ = s.type_profiles;
}

std::optional<GradStats> StepStatistics::grad_stats() const {
  if (!estimator_.has_estimate()) return std::nullopt;
  return estimator_.stats();
}

}  // namespace pollux::agent_detail

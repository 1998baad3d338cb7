// What the agent learns of the job from its steps, the same on every rank
// (it is fed only all-reduced numbers): the gradient noise
// (GradNoiseEstimator), which gives the AdaScale gain, and the step times
// of this run's GPU type (ProfileTable), beside the fits and profiles of
// the other GPU types the job ran on. It writes and reads the statistics
// part of the step packet (step_packet.h), tells the hint what it knows, and
// is saved in and restored from the agent's state.
#ifndef POLLUX_AGENT_STEP_STATISTICS_H
#define POLLUX_AGENT_STEP_STATISTICS_H

#include <optional>
#include <string>
#include <vector>

#include "agent_state.h"
#include "pollux/agent.h"
#include "pollux/agent_backend.h"
#include "pollux/grad_noise.h"
#include "pollux/hint.h"
#include "profile_table.h"

namespace pollux::agent_detail {

class StepStatistics {
 public:
  /// What a step's record was measured under.
  struct Context {
    int atomic = 0;
    int accum = 0;
    bool profiled = false;  ///< past the warm-up after a start or a configuration change
    bool two_step = false;  ///< one of a pair of steps that measures the noise (TwoStep)
    bool skipped = false;   ///< the update was left out: no progress, no statistics
  };

  /// What a step added to the profile.
  enum class ProfileNews {
    kNone,     ///< nothing (no valid record on some rank, skipped, or not profiled)
    kSample,   ///< a sample: worth a re-fit once refit_interval has passed
    kMatured,  ///< a configuration's profile reached min_profile_steps: worth a re-fit now
  };

  /// `options` validated; throws std::invalid_argument for a malformed GPU
  /// type (reported_gpu_type()).
  explicit StepStatistics(const AgentOptions& options);

  /// This rank's record of the previous step, into its part of the packet.
  static void contribute(const StepRecord& record, double* packet);
  /// Learns from the reduced packet of the step `context` describes, with
  /// this rank's `record` of it (the averaged gradient's norms are the same
  /// on every rank): nothing unless every rank had a valid record.
  ProfileNews absorb(const double* packet, const StepRecord& record, const Context& context, int nodes, int replicas);

  /// The AdaScale gain of a total batch (1 without an estimate).
  double gain(long long total_batch) const;

  /// The hint's gradient statistics, GPU type, fits on other types and
  /// profile (`replicas`: this run's, which the profile has measured).
  void describe(Hint& hint, int replicas) const;
  /// Into the agent's state of a checkpoint (all but the fit, rank 0's).
  void save(AgentState& state) const;
  /// From a checkpoint's state (`dir`, for messages), moved to this run's
  /// GPU type (switch_gpu_type(), which updates state.perf too).
  void restore(AgentState& state, const std::string& dir, int rank);

  std::optional<GradStats> grad_stats() const;
  /// reported_gpu_type(): the hint's gpu_type.
  const std::string& gpu_type() const { return gpu_type_; }
  std::vector<ProfileSample> samples() const { return profile_.samples(); }

 private:
  const AgentOptions& opt_;
  GradNoiseEstimator estimator_;
  ProfileTable profile_;                  // of this run's GPU type
  std::string gpu_type_;                  // reported_gpu_type(): the hint's gpu_type
  std::vector<HintTypePerf> type_perf_;   // the job's fits on the other types it ran on
  std::vector<TypeProfile> type_profiles_;  // and their profiles (checkpointed, not hinted)
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_STEP_STATISTICS_H

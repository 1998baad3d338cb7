// The agent's own state, saved in every checkpoint next to the model
// (agent.yaml) and restored after a requeue: where training stands, the
// gradient-noise estimator, the profile and the last fitted model of the
// GPU type the run ran on, and the fits and profiles of the other types
// the job ran on.
#ifndef POLLUX_AGENT_STATE_H
#define POLLUX_AGENT_STATE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pollux/grad_noise.h"
#include "pollux/hint.h"
#include "profile_table.h"

namespace pollux::agent_detail {

inline constexpr const char* kAgentStateFile = "agent.yaml";
inline constexpr int kAgentStateVersion = 1;

/// The profile samples of one GPU type the job ran on before.
struct TypeProfile {
  std::string gpu_type;
  std::vector<ProfileEntry> profile;
};

struct AgentState {
  std::uint32_t job_id = 0;
  int restart_count = 0;
  long long step = 0;
  long long samples = 0;
  double progress = 0;
  double time = 0;             ///< Unix time of the checkpoint
  /// Seconds rank 0 took to save it (the application's callback and this
  /// state), a part of what a restart from it costs; 0: not measured (a
  /// checkpoint of an agent older than the field). Optional in the file.
  double save_seconds = 0;
  BatchLimits limits;
  HintConfig config;           ///< the configuration of the run that checkpointed
  double estimator_init_batch = 1;
  GradNoiseEstimator::State estimator;
  /// The GPU type `perf` and `profile` were measured on ("": unknown, or
  /// an agent older than the field).
  std::string gpu_type;
  std::optional<PerfParams> perf;
  std::vector<ProfileEntry> profile;
  /// The job's fits on the other GPU types it ran on (as Hint::type_perf).
  std::vector<HintTypePerf> type_perf;
  /// The profiles of the other GPU types it ran on (at most kHintMaxTypes,
  /// none of gpu_type, each type once), so that a return to a type resumes
  /// its samples as well as its fit. Optional in the file.
  std::vector<TypeProfile> type_profiles;
};

/// Makes `state`, a checkpoint of a run on state.gpu_type, the state of a
/// run on `gpu_type`: profiles and fits are per type (samples of one type
/// are fitted only with samples of that type). On the same type, or from
/// a checkpoint whose type is unknown (an agent older than types), nothing
/// changes. On another type the saved fit joins type_perf and the saved
/// profile type_profiles (each replacing an older one of that type; the
/// oldest is dropped beyond kHintMaxTypes), and this type's earlier fit
/// and profile, if any, leave them to be the starting ones (samples of a
/// type stay valid on it: a return resumes where the job left it); a type
/// the job never ran on starts with no fit and an empty profile. Returns
/// whether the type changed.
bool switch_gpu_type(AgentState& state, const std::string& gpu_type);

std::string emit_agent_state(const AgentState& state);
/// Throws std::runtime_error with a one-line reason if the text is not a
/// valid agent state.
AgentState parse_agent_state(std::string_view text);

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_STATE_H

// The agent's own state, saved in every checkpoint next to the model
// (agent.yaml) and restored after a requeue: where training stands, the
// gradient-noise estimator, the profile and the last fitted model.
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

struct AgentState {
  std::uint32_t job_id = 0;
  int restart_count = 0;
  long long step = 0;
  long long samples = 0;
  double progress = 0;
  double time = 0;             ///< Unix time of the checkpoint
  BatchLimits limits;
  HintConfig config;           ///< the configuration of the run that checkpointed
  double estimator_init_batch = 1;
  GradNoiseEstimator::State estimator;
  std::optional<PerfParams> perf;
  std::vector<ProfileEntry> profile;
};

std::string emit_agent_state(const AgentState& state);
/// Throws std::runtime_error with a one-line reason if the text is not a
/// valid agent state.
AgentState parse_agent_state(std::string_view text);

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_STATE_H

// Rank 0's hints and when to write them. The Adapter's thread does the work
// (re-fit, batch-size proposal, the hint file); this decides when: at once
// on news (a new configuration, the restart time measured, a checkpoint to
// acknowledge), with a re-fit when a configuration's profile has matured or,
// while samples arrive, every refit_interval; otherwise every
// hint_interval. It keeps the checkpoint the hint reports.
#ifndef POLLUX_AGENT_HINT_PUBLISHER_H
#define POLLUX_AGENT_HINT_PUBLISHER_H

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "adapter.h"
#include "pollux/agent.h"
#include "pollux/hint.h"
#include "step_statistics.h"

namespace pollux::agent_detail {

class HintPublisher {
 public:
  using Propose = AdaptRequest::Propose;

  /// `describe` gives the hint as the agent stands, but for its timestamp
  /// and checkpoint, which publish() adds. `spool_dir` "": no hint files.
  HintPublisher(const std::string& spool_dir, int rank, const AgentOptions& options, std::function<Hint()> describe);

  /// Hands a hint to the Adapter now, re-fitting first when `refit`;
  /// `propose` is kNo unless the job adapts.
  void publish(bool refit, Propose propose);
  /// At a step's end: publishes, proposing a better configuration if any,
  /// when due (see above).
  void maybe_publish();
  /// The last hint, with everything measured, written before it returns.
  /// Never throws.
  void close();

  void learned(StepStatistics::ProfileNews news);
  void config_changed() { config_changed_ = true; }
  /// The model's form changed (Agent::set_sharded): re-fit at the next step's end.
  void refit_soon() { profile_changed_ = true; }
  void restart_measured() { restart_news_ = true; }

  /// A checkpoint of `step` committed now; `ready_for_requeue`: the hint
  /// acknowledges a resize (the scheduler may requeue the job).
  void checkpoint_committed(long long step, bool ready_for_requeue);
  /// The checkpoint this run restored from, taken at Unix time `time`.
  void checkpoint_restored(long long step, double time);
  /// The requeue did not come: the acknowledgement is withdrawn.
  void requeue_withdrawn() { checkpoint_->ready_for_requeue = false; }

  /// The fits, proposals and hint writes.
  Adapter& adapter() { return adapter_; }

 private:
  using Clock = std::chrono::steady_clock;

  const AgentOptions& opt_;
  std::function<Hint()> describe_;
  Adapter adapter_;
  Clock::time_point last_fit_{}, last_hint_{};
  bool new_data_ = false, profile_changed_ = false, config_changed_ = false, restart_news_ = false;
  std::optional<HintCheckpoint> checkpoint_;
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_HINT_PUBLISHER_H

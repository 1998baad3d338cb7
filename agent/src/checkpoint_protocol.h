// The checkpoint protocol, run by every rank together: rank 0 begins a
// directory in the CheckpointStore, every rank's save callback writes its
// part, rank 0 adds the agent's own state (agent.yaml, kAgentStateFile) and
// commits once every rank has succeeded; restore() finds the latest
// committed checkpoint and has every rank load it. Rank 0 decides each
// store operation and every rank hears its verdict (RootMessage), so that
// all ranks take the same path: a failure leaves the previous checkpoint
// the latest and training goes on; a superseded run (a later run of the
// job owns the checkpoints) throws SupersededError on every rank.
#ifndef POLLUX_AGENT_CHECKPOINT_PROTOCOL_H
#define POLLUX_AGENT_CHECKPOINT_PROTOCOL_H

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "agent_state.h"
#include "pollux/agent.h"
#include "pollux/checkpoint_store.h"

namespace pollux {
class Communicator;
}

namespace pollux::agent_detail {

struct RootMessage;

class CheckpointProtocol {
 public:
  /// `state` gives rank 0's agent state for a checkpoint (its save_seconds
  /// is filled in here); called after the save callbacks have run.
  CheckpointProtocol(Communicator& comm, const AgentOptions& opt, const JobEnvironment& env,
                     std::function<AgentState()> state);

  /// The application's callbacks (none: the agent saves only its state).
  CheckpointFn save_fn, load_fn;

  /// checkpoint_root() of this run.
  const std::string& root() const { return store_.root(); }

  /// Rank 0: whether checkpoint_interval has passed since the last
  /// checkpoint, taken or tried (0: never due).
  bool periodic_due() const;

  /// Takes a checkpoint of `step` (collective); returns "" once it is
  /// committed, else why not (the same text on every rank). Throws
  /// SupersededError on every rank when a later run owns the store.
  std::string take(long long step);

  struct Restored {
    std::string dir;
    AgentState state;  ///< the agent state saved with it (rank 0's, heard by every rank)
  };
  /// Finds the latest checkpoint (rank 0, which first claims the store and,
  /// on a job's first run in the default directory, sets aside what an
  /// earlier job left there) and has every rank's load callback read it
  /// (collective). nullopt: there is none. Throws std::runtime_error on
  /// every rank when one is there but cannot be restored (SupersededError
  /// when a later run owns the store).
  std::optional<Restored> restore();

 private:
  using Clock = std::chrono::steady_clock;

  // Rank 0 runs `op` on the store (it fills in the message); every rank
  // hears the verdict: kSuperseded for SupersededError, kFailed for any
  // other error, with its text. Rank 0 logs a refusal as "checkpoint at
  // step <step> <superseded or failed>: why" (nullptr: not logged).
  RootMessage decide(const std::function<void(RootMessage&)>& op, long long step, const char* superseded,
                     const char* failed);
  // Runs `work` (an application callback and what goes with it) on every
  // rank and returns on how many it failed, each rank logging its own
  // failure as "<what> failed: why". A barrier as well.
  int every_rank(const std::function<void()>& work, const std::string& what, const char* callback);
  void write_state(const std::string& dir, double save_seconds);
  void schedule_periodic();
  void set_aside_earlier_job();

  Communicator& comm_;
  const AgentOptions& opt_;
  const JobEnvironment& env_;
  std::function<AgentState()> state_;
  int rank_, replicas_;
  CheckpointStore store_;
  Clock::time_point next_periodic_{};  // rank 0
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_CHECKPOINT_PROTOCOL_H

// What a restart costs the job (the hint's restart_seconds; doc/agent.md,
// "Restart time"): the save time of the checkpoint this run restored from
// plus this process's start (its exec, so that a Python program's
// interpreter and imports count) until the end of its first optimizer step.
// Measured once, by rank 0.
#ifndef POLLUX_AGENT_RESTART_TIME_H
#define POLLUX_AGENT_RESTART_TIME_H

#include <chrono>

namespace pollux::agent_detail {

class RestartTime {
 public:
  /// The start where /proc cannot say: when this object was made.
  RestartTime() = default;

  /// This run restored a checkpoint that took `save_seconds` to save.
  void restored(double save_seconds) { restored_save_seconds_ = save_seconds; }

  /// At the end of every optimizer step: at this run's first, rank 0
  /// measures and returns true (the hint is worth writing at once).
  bool step_ended(int rank, int verbose);

  /// 0 until measured.
  double seconds() const { return seconds_; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point created_ = Clock::now();
  double restored_save_seconds_ = 0;
  bool first_step_done_ = false;
  double seconds_ = 0;
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_RESTART_TIME_H

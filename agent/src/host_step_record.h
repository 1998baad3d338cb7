// The host clock's record of one rank's steps, shared by the backends that
// time on the host (the CPU backend and the framework-neutral one): each
// micro-step's seconds from its micro_begin() to its micro_end(), the step's
// from the last micro-step's begin to the end of the sync, and the hand-off
// of a finished step's record to take_record(), once. The backend writes the
// norms into current() before finish().
#ifndef POLLUX_AGENT_HOST_STEP_RECORD_H
#define POLLUX_AGENT_HOST_STEP_RECORD_H

#include <chrono>

#include "pollux/agent_backend.h"

namespace pollux::agent_detail {

class HostStepRecord {
 public:
  void micro_begin() { micro_start_ = Clock::now(); }

  /// Counts the micro-step and adds its seconds.
  void micro_end() {
    ++cur_.micro_steps;
    last_micro_start_ = micro_start_;
    cur_.grad_time_sum += since(micro_start_);
  }

  /// The step being measured.
  StepRecord& current() { return cur_; }

  /// Ends the step at the end of its sync: its seconds, valid when it had a
  /// micro-step; take() returns it.
  void finish() {
    cur_.step_time = since(last_micro_start_);
    cur_.valid = cur_.micro_steps > 0;
    done_ = cur_;
    cur_ = StepRecord{};
  }

  /// The record take() returns next, in place of the last finished one.
  void hand_over(const StepRecord& record) { done_ = record; }

  /// The last finished step's record, once (invalid if none since).
  StepRecord take() {
    StepRecord r = done_;
    done_ = StepRecord{};
    return r;
  }

  /// Forgets the step being measured and the finished one.
  void reset() { cur_ = done_ = StepRecord{}; }

 private:
  using Clock = std::chrono::steady_clock;
  static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

  Clock::time_point micro_start_{}, last_micro_start_{};
  StepRecord cur_, done_;
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_HOST_STEP_RECORD_H

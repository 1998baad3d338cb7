// The agent's profile: mean micro-step and step times per configuration
// (nodes, replicas, atomic batch), accumulated over the steps measured.
// Identical on all ranks (it is fed with all-reduced measurements).
#ifndef POLLUX_AGENT_PROFILE_TABLE_H
#define POLLUX_AGENT_PROFILE_TABLE_H

#include <vector>

#include "pollux/throughput.h"

namespace pollux::agent_detail {

struct ProfileEntry {
  int nodes = 1;
  int replicas = 1;
  int atomic_batch = 1;
  long long steps = 0;        ///< optimizer steps measured
  long long micro_steps = 0;  ///< micro-steps measured (all ranks' mean counts once per rank-step)
  double grad_time_sum = 0;   ///< seconds, over micro_steps
  double step_time_sum = 0;   ///< seconds, over steps

  ProfileSample sample() const;
};

class ProfileTable {
 public:
  /// At most this many configurations are kept: the least measured one
  /// makes room for a new one.
  explicit ProfileTable(std::size_t capacity) : capacity_(capacity) {}

  /// Adds one step measured at (nodes, replicas, atomic): the mean
  /// micro-step time over `micro_steps` micro-steps and the step time.
  /// Returns true when the configuration's step count just reached
  /// `mature_steps` (a profile change: worth a re-fit).
  bool add(int nodes, int replicas, int atomic, double grad_time_mean, long long micro_steps,
           double step_time, long long mature_steps);

  /// Samples of every configuration measured at least once, in insertion order.
  std::vector<ProfileSample> samples() const;
  int max_replicas() const noexcept;
  const std::vector<ProfileEntry>& entries() const noexcept { return entries_; }
  /// Replaces the content (restore); entries beyond the capacity are dropped.
  void assign(std::vector<ProfileEntry> entries);

 private:
  std::size_t capacity_;
  std::vector<ProfileEntry> entries_;
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_PROFILE_TABLE_H

// The agent's profile: micro-step and step times per configuration
// (nodes, replicas, atomic batch). Identical on all ranks (it is fed with
// all-reduced measurements).
//
// Each configuration reports the median of its last kWindow steps rather
// than the mean of all: a step that was preempted, page-faulted or waited
// for a checkpoint is not a property of the configuration, and on a shared
// node such steps would dominate a mean (we measured means 20x the median
// on a loaded 2-core machine). The window also lets the profile follow
// slow drifts (warming caches, other jobs on the node).
#ifndef POLLUX_AGENT_PROFILE_TABLE_H
#define POLLUX_AGENT_PROFILE_TABLE_H

#include <vector>

#include "pollux/throughput.h"

namespace pollux::agent_detail {

struct ProfileEntry {
  static constexpr std::size_t kWindow = 31;

  int nodes = 1;
  int replicas = 1;
  int atomic_batch = 1;
  long long steps = 0;             ///< steps measured in all
  std::vector<double> grad_times;  ///< mean micro-step seconds of the last kWindow steps (ring)
  std::vector<double> step_times;  ///< step seconds of the last kWindow steps (ring)
  std::size_t next = 0;            ///< ring position of the oldest value once full

  void add(double grad_time, double step_time);
  /// Medians of the window (zero times when empty).
  ProfileSample sample() const;
};

class ProfileTable {
 public:
  /// At most this many configurations are kept: the least measured one
  /// makes room for a new one.
  explicit ProfileTable(std::size_t capacity) : capacity_(capacity) {}

  /// Adds one step measured at (nodes, replicas, atomic): the mean
  /// micro-step time and the step time. Returns true when the
  /// configuration's step count just reached `mature_steps` (a profile
  /// change: worth a re-fit).
  bool add(int nodes, int replicas, int atomic, double grad_time, double step_time, long long mature_steps);

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

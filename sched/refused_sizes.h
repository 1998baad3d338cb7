// SPDX-License-Identifier: GPL-2.0-or-later
// The sizes Slurm refused for each elastic job, remembered across rounds:
// a size Slurm refused (its limits test after sched/pollux set it, or its
// main loop's BadConstraints) is never proposed to the job again until the
// job's partitions, limits or range change, and each refusal, like a job
// that Slurm allows no size at all, is logged once per reason. Without
// Slurm: the round thread gives it the snapshot before the policy and the
// enactment's refusals after it, and logs the lines it returns.
#ifndef POLLUX_SCHED_REFUSED_SIZES_H
#define POLLUX_SCHED_REFUSED_SIZES_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "round.h"

namespace pollux::sched {

class RefusedSizes {
 public:
  /// Before the policy: forgets the sizes of jobs whose partitions, limits
  /// or range changed (limits_key, range) and of jobs gone from the
  /// snapshot; adds each job's refused_now; sets each job's `refused`.
  /// Returns the lines to log: a size newly found impossible, and a job
  /// Slurm allows no size (no_size), once per reason.
  std::vector<std::string> apply(Snapshot& snap);

  /// After the enactment: Slurm refused `size` for `job` for `reason`.
  /// Returns `message` when that reason is not the one last logged for the
  /// job, else "" (the refusal is remembered either way).
  std::string refused(const ElasticJobSnapshot& job, const Size& size, const std::string& reason,
                      const std::string& message);

 private:
  struct Refused {
    std::string key;          // the job's limits_key and range when refused
    std::vector<Size> sizes;  // never proposed again while the key holds
    std::string logged;       // the reason last logged
  };
  // Adds `size` to the job's refused sizes; false when it was there.
  bool remember(const ElasticJobSnapshot& job, const Size& size);

  std::map<std::uint32_t, Refused> refused_;
  std::map<std::uint32_t, std::string> no_size_logged_;  // job -> the no-size reason last logged
};

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_REFUSED_SIZES_H

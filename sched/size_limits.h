// SPDX-License-Identifier: GPL-2.0-or-later
// Finding the largest size a limit test allows, without Slurm: the search
// and the rule for a running job (common/job_acct_limits.cc applies them to
// Slurm's accounting-policy test).
#ifndef POLLUX_SCHED_SIZE_LIMITS_H
#define POLLUX_SCHED_SIZE_LIMITS_H

#include <functional>

namespace pollux::sched {

/// The largest n in [lo, hi] for which allowed(n) holds, when allowed is
/// monotone (true up to some n, false above it); lo - 1 when it holds for
/// none. Calls allowed() O(log(hi - lo)) times.
int largest_allowed(int lo, int hi, const std::function<bool(int)>& allowed);

/// What a limit test said of a running job's size asked in full (its
/// usage already counts what the job holds now).
enum class FullTest {
  kPass,      ///< no limit refused it
  kPerJob,    ///< a per-job or per-node limit refused it (usage plays no part)
  kUsage,     ///< a limit on usage (per user, per account, group) refused it
};

/// Whether a running job that holds `held` may be given `size`: what it
/// holds it keeps (Slurm started it so); more when the test of the full
/// size passes, or when only a usage limit refused it (that usage counts
/// the job's own allocation, which a resize gives back) and the test of
/// the growth alone (`growth_passes`: size - held on top of today's usage)
/// passes.
bool running_size_allowed(int size, int held, FullTest full, bool growth_passes);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_SIZE_LIMITS_H

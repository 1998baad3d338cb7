// SPDX-License-Identifier: GPL-2.0-or-later
// The one rule for untrusted text that reaches slurmctld's log or a job's
// SystemComment (a hint file's bytes quoted in its rejection, a file name
// found in the spool, a SchedulerParameters value): it stays on one line
// and cannot forge another, and it is short.
#ifndef POLLUX_SCHED_LOG_SAFE_H
#define POLLUX_SCHED_LOG_SAFE_H

#include <cstddef>
#include <string>
#include <string_view>

namespace pollux::sched {

/// Longest text log_safe() returns by default (bytes, marker included).
inline constexpr std::size_t kLogSafeMax = 1024;

/// `text` with every byte that is not printable ASCII escaped (\n, \r, \t,
/// \\, and \xNN for the other control bytes, DEL and every byte >= 0x80),
/// so the result holds only bytes 0x20-0x7e; cut, at an escape's boundary,
/// to at most `max_bytes` (>= 32) with "...(N bytes)" saying how long the
/// original was. Printable ASCII without a backslash comes back unchanged.
/// Never throws except std::bad_alloc.
std::string log_safe(std::string_view text, std::size_t max_bytes = kLogSafeMax);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_LOG_SAFE_H

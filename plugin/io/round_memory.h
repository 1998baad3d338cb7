// SPDX-License-Identifier: GPL-2.0-or-later
// What sched/pollux's rounds carry from one to the next beyond the job
// records (whose SystemComments hold each job's state): the time of the
// last periodic round, which sets when the next one is due, and the
// policy's search state (Policy::search_state(): the random generator the
// local search breaks ties with). Written atomically after each periodic
// round to <StateSaveLocation>/pollux_rounds and read when slurmctld
// starts, so that a restart loses nothing: the next periodic round comes
// when it was due and decides what it would have decided without the
// restart, given the same jobs (the restart penalty weighs a reversal of a
// decision just made as it weighs any other).
#ifndef POLLUX_SCHED_ROUND_MEMORY_H
#define POLLUX_SCHED_ROUND_MEMORY_H

#include <optional>
#include <string>
#include <string_view>

namespace pollux::sched {

inline constexpr std::string_view kRoundMemoryName = "pollux_rounds";

struct RoundMemory {
  double last_periodic = 0;  ///< Unix time the last periodic round started
  std::string search_state;  ///< Policy::search_state() after it (one line)
};

/// "pollux_rounds 1\nlast_periodic=<seconds>\nsearch=<state>\n".
std::string format_round_memory(const RoundMemory& memory);

/// The memory format_round_memory() wrote; nullopt for anything else
/// (another version, a damaged or truncated file).
std::optional<RoundMemory> parse_round_memory(std::string_view text);

/// The memory in the file `path`, which slurmctld's own user must own:
/// nullopt, with the reason in `*why`, when it is missing, not such a file
/// or damaged. Never throws.
std::optional<RoundMemory> read_round_memory(const std::string& path, std::string* why) noexcept;

/// Replaces the file `path` with `memory` atomically: empty, or the reason
/// it failed. Never throws.
std::string write_round_memory(const std::string& path, const RoundMemory& memory) noexcept;

/// When the first periodic round after a start is due, in seconds from
/// `now` (Unix time): the remembered round's time plus `interval` when that
/// is still ahead, 0 when it is overdue (slurmctld was down longer than an
/// interval), and `interval` without a memory or with one from the future
/// (a clock set back): as if a round had just run.
double first_round_delay(const std::optional<RoundMemory>& memory, double now, double interval);

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_ROUND_MEMORY_H

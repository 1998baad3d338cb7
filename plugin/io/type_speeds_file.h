// SPDX-License-Identifier: GPL-2.0-or-later
// What TypeSpeedLearner has learnt about the GPU types' relative speeds
// (gpu_types.h: LearntTypeSpeeds), kept across slurmctld restarts in
// <StateSaveLocation>/pollux_gpu_type_speeds: written atomically
// (temporary file, fsync, rename) after each round in which it changed,
// read when the round thread starts. StateSaveLocation rather than the
// spool: it is slurmctld's own state, which its user alone writes (the
// spool is written by every job's agent), and a backup controller taking
// over reads the same directory.
//
// The file is text, one record a line, in this order:
//   pollux_gpu_type_speeds 1
//   type <seed speed> [<name>]        2 or more, names sorted and distinct
//                                     (no name: untyped GPUs)
//   pair <a> <b> <count> <log sum>    a < b type indices, each pair once
//   seen <job id> <a> <b>             a live job's pair already observed
// Reading it treats it as untrusted: anything else is refused with one
// line naming the file and line (never a crash), and the learner then
// starts from the seeds.
#ifndef POLLUX_SCHED_TYPE_SPEEDS_FILE_H
#define POLLUX_SCHED_TYPE_SPEEDS_FILE_H

#include <string>
#include <string_view>

#include "sched/gpu_types.h"

namespace pollux::sched {

inline constexpr std::string_view kTypeSpeedsName = "pollux_gpu_type_speeds";

/// The file's text for `learnt` (doubles in full precision: parsing it back
/// gives the same values). `learnt` must have names parse accepts (Slurm's
/// GRES type names do: printable, no space).
std::string format_type_speeds(const LearntTypeSpeeds& learnt);

struct ParsedTypeSpeeds {
  LearntTypeSpeeds learnt;
  std::string error;  ///< empty: parsed; else "<path>:<line>: <why>", one printable line
  bool missing = false;  ///< read_type_speeds(): there is no such file (a first start)
};

/// The learnt state in `text`, the file `path`'s bytes (`path` only names
/// it in the error). Never throws but std::bad_alloc.
ParsedTypeSpeeds parse_type_speeds(std::string_view text, const std::string& path);

/// Reads the file `path` (owned by slurmctld's user, at most 4 MiB):
/// error "<path>: ..." when it is missing, not such a file or refused.
/// Never throws.
ParsedTypeSpeeds read_type_speeds(const std::string& path) noexcept;

/// Replaces the file `path` with `learnt` atomically: empty, or the reason
/// it failed. Never throws.
std::string write_type_speeds(const std::string& path, const LearntTypeSpeeds& learnt) noexcept;

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_TYPE_SPEEDS_FILE_H

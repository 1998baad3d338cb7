// The hint file: what a job's agent tells the scheduler, through the spool.
//
// Rank 0 of an elastic job writes <spool>/<job_id>.hint.yaml atomically
// (temporary file in the same directory, fsync, rename); sched/pollux
// reads it every round. The plugin treats the file as untrusted input:
// read_hint_file() checks the owner, refuses symlinks, caps the size and
// validates every field before anything reaches the policy.
// The format, every field's range and the file's naming and permissions
// are documented in doc/hint-format.md (the contract).
#ifndef POLLUX_HINT_H
#define POLLUX_HINT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pollux/efficiency.h"
#include "pollux/gpu_type.h"
#include "pollux/job_description.h"
#include "pollux/goodput.h"
#include "pollux/throughput.h"

namespace pollux {

/// Format version this library writes and the only one it accepts.
inline constexpr int kHintFormatVersion = 1;
/// Hint files larger than this are rejected unread.
inline constexpr std::size_t kHintMaxBytes = 256 * 1024;
/// At most this many profile samples are kept / accepted.
inline constexpr std::size_t kHintMaxSamples = 256;
/// The highest signal number a hint may announce (Linux's SIGRTMAX).
inline constexpr int kHintMaxSignal = 64;
/// At most this many other GPU types' fits (Hint::type_perf).
inline constexpr std::size_t kHintMaxTypes = 16;

/// The configuration the job runs now.
struct HintConfig {
  int nodes = 0;
  int replicas = 0;
  int atomic_batch = 0;
  int accum_steps = 0;
};

/// The agent's acknowledgement that a checkpoint was taken and the job is
/// ready to be requeued (resize protocol, doc/hint-format.md).
struct HintCheckpoint {
  long long step = 0;       ///< optimizer step the checkpoint holds
  double time = 0;          ///< Unix time it was committed
  bool ready_for_requeue = false;
};

/// The job's throughput fit on a GPU type it ran on before.
struct HintTypePerf {
  std::string gpu_type;  ///< a valid_gpu_type() name
  PerfParams perf;
};

/// The fields the scheduler's job description reads (max_profiled_replicas,
/// restart_seconds: restart_seconds is optional in the file, in [0,
/// kMaxRestartSeconds], 0 when not measured yet) are AgentMeasures'.
struct Hint : AgentMeasures {
  int version = kHintFormatVersion;
  std::uint32_t job_id = 0;
  std::uint32_t uid = 0;
  double timestamp = 0;              ///< Unix time of writing
  int restart_count = 0;             ///< SLURM_RESTART_COUNT when written
  BatchLimits limits;                ///< the job's batch-size limits
  std::optional<PerfParams> perf;    ///< absent until the agent has fitted a model
  std::optional<GradStats> grad;     ///< absent until measured
  HintConfig config;
  /// The GPU type this run's perf, profile and config were measured on
  /// (a valid_gpu_type() name, pollux/gpu_type.h); empty: unknown (CPU,
  /// or an agent older than the field).
  std::string gpu_type;
  /// The job's fits on the OTHER GPU types it ran on before (never
  /// gpu_type itself): distinct names, at most kHintMaxTypes.
  std::vector<HintTypePerf> type_perf;
  double progress = 0;               ///< scale-invariant progress (sum of gains)
  long long step = 0;                ///< optimizer steps taken
  std::vector<ProfileSample> profile;
  std::optional<HintCheckpoint> checkpoint;
  /// The signal this run's agent takes a resize request on, announced once
  /// it can checkpoint (0: none, the job is moldable: sched/pollux never
  /// signals it). Only a hint of the job's current run counts.
  int resize_signal = 0;
};

/// Serialises a hint as YAML (libyaml emitter). Throws std::runtime_error
/// only if the emitter fails.
std::string emit_hint(const Hint& hint);

/// Result of parsing or reading: a hint, or a one-line reason it was rejected.
struct HintResult {
  std::optional<Hint> hint;
  std::string error;  ///< empty on success
  explicit operator bool() const noexcept { return hint.has_value(); }
};

/// Parses and validates YAML text (libyaml parser): known version, every
/// required field present and no unknown one, every number finite and in
/// its documented range, limits consistent (BatchLimits::valid()), config
/// and profile consistent, GPU type names valid and type_perf's distinct
/// and other than gpu_type, restart_seconds in [0, 86400]. Never throws; the error is one line.
HintResult parse_hint(std::string_view yaml) noexcept;

/// Reads <path> as untrusted input: O_NOFOLLOW, regular file, owned by
/// `expected_uid`, at most kHintMaxBytes, then parse_hint() and checks that
/// the file's job_id and uid fields are `expected_job_id` and
/// `expected_uid`. Errors start with the path. Never throws.
HintResult read_hint_file(const std::string& path, std::uint32_t expected_uid,
                          std::uint32_t expected_job_id) noexcept;

/// Path of a job's hint file in a spool directory.
std::string hint_path(const std::string& spool_dir, std::uint32_t job_id);

/// Writes the hint atomically to hint_path(spool_dir, hint.job_id):
/// temporary file in the same directory, fsync, rename, fsync of the
/// directory. Returns an empty string on success, else the reason.
std::string write_hint_file(const std::string& spool_dir, const Hint& hint) noexcept;

}  // namespace pollux

#endif  // POLLUX_HINT_H

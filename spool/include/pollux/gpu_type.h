// GPU type names: the one rule by which a job's agent names the GPU type
// it runs on (in its hint) and sched/pollux matches that name against
// Slurm's typed GRES (Gres=gpu:TYPE:N).
//
// A type name is 1 to kGpuTypeMaxLen characters of [a-z0-9_.-]. The
// agent writes normalize_gpu_type() of the CUDA device name (or of
// POLLUX_GPU_TYPE); the hint's reader refuses any other text
// (valid_gpu_type()). For the usual device names the result is the type
// name of Slurm's own AutoDetect=nvml (lower case, spaces to '_'):
// "NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3",
// "Tesla V100-SXM2-16GB" -> "tesla_v100-sxm2-16gb".
#ifndef POLLUX_GPU_TYPE_H
#define POLLUX_GPU_TYPE_H

#include <cstddef>
#include <string>
#include <string_view>

namespace pollux {

/// Longest GPU type name a hint may carry.
inline constexpr std::size_t kGpuTypeMaxLen = 64;

/// Whether `name` is a GPU type name: 1..kGpuTypeMaxLen characters, each
/// a lower-case letter, a digit, '_', '.' or '-'.
bool valid_gpu_type(std::string_view name) noexcept;

/// The type name of a device or type text: lower case, every run of
/// characters outside [a-z0-9.-] (after lowering; '_' counts as outside)
/// turned into one '_', '_' trimmed at both ends, cut to kGpuTypeMaxLen
/// (and trimmed again). Empty when nothing is left (then the type is
/// unknown). The result is empty or valid_gpu_type().
std::string normalize_gpu_type(std::string_view text);

/// Whether a Slurm GRES type name (`gres_type`, as in Gres=gpu:TYPE:N,
/// normalised here) names the GPU type a job reported (`reported`, a
/// valid_gpu_type()): equal, or equal to a run of whole tokens of it,
/// tokens being separated by '_', '-' or '.' ("a100" and "a100-sxm4" match
/// "nvidia_a100-sxm4-80gb"; "a10" does not match "nvidia_a100"). Empty
/// names match nothing.
bool gpu_type_matches(std::string_view gres_type, std::string_view reported) noexcept;

}  // namespace pollux

#endif  // POLLUX_GPU_TYPE_H

// The micro-batch limit a job learnt from running out of memory (see
// Agent::out_of_memory() and doc/agent.md, "Memory"): kept in the
// checkpoint directory, `<root>/memory-limit`, replaced atomically, so that
// the job's later runs never configure a micro-batch above it.
//
//   # pollux agent: micro-batches above max_atomic ran out of memory
//   max_atomic: 16
//   out_of_memory_at: 64
//   job_id: 4242
#ifndef POLLUX_AGENT_MEMORY_LIMIT_H
#define POLLUX_AGENT_MEMORY_LIMIT_H

#include <cstdint>
#include <string>
#include <string_view>

namespace pollux::agent_detail {

inline constexpr const char* kMemoryLimitFile = "memory-limit";

struct MemoryLimit {
  int max_atomic = 0;        ///< the largest micro-batch the job may run
  int out_of_memory_at = 0;  ///< the micro-batch that ran out of memory
  std::uint32_t job_id = 0;  ///< the Slurm job that learnt it (0: none)
};

/// The rule: the largest micro-batch that completed a step in this process
/// (`largest_run`, 0: none) if it is below the one that ran out of memory,
/// else that one minus 1; never below `min_atomic` nor above `max_atomic`.
/// Throws std::runtime_error naming the case when `micro_batch` is at most
/// `min_atomic`: nothing smaller to try.
int lowered_max_atomic(int micro_batch, int largest_run, int min_atomic, int max_atomic);

std::string emit_memory_limit(const MemoryLimit& m);
/// Throws std::runtime_error naming what is wrong.
MemoryLimit parse_memory_limit(std::string_view text);

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_MEMORY_LIMIT_H

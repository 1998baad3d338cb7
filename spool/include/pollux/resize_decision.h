// The resize decision: what sched/pollux writes into the spool just before
// it signals a job for a resize, so that the job's agent can tell its
// request from any other delivery of the same signal (Slurm's --signal
// warning, a user's scancel --signal, Lightning's auto-requeue).
//
// <spool>/<job_id>.resize holds one line, "resize <restart_count> <ms>":
// the run it is for (SLURM_RESTART_COUNT) and the Unix time of the
// decision in milliseconds, written atomically (rename) by slurmctld. A
// delivery is a resize request when the file names the receiving run and
// is at most kResizeDecisionFresh seconds old; it is a new request when
// its time differs from the last one the process took (doc/agent.md).
// "cancel <restart_count> <ms>" calls the run's latest request off (no
// signal: the agent reads it while it checkpoints for the request or waits
// for the requeue, and resumes training at once). An agent that predates
// the cancel line reads it as no decision: it waits out its requeue wait.
#ifndef POLLUX_RESIZE_DECISION_H
#define POLLUX_RESIZE_DECISION_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pollux {

/// A decision older than this (seconds, clocks of the controller and the
/// node compared) is not a request any more: the signal is the program's.
inline constexpr long long kResizeDecisionFresh = 60;

struct ResizeDecision {
  int restart_count = 0;
  long long time_ms = 0;  ///< Unix time of the decision, milliseconds
  bool cancel = false;    ///< "cancel": the run's earlier requests are called off
};

/// <spool>/<job_id>.resize
std::string resize_decision_path(const std::string& spool_dir, std::uint32_t job_id);

/// Writes the decision atomically (mode 0644); "" on success, else why not.
std::string write_resize_decision(const std::string& spool_dir, std::uint32_t job_id,
                                  const ResizeDecision& decision) noexcept;

/// Parses the file's text. Async-signal-safe (no allocation, no locale):
/// the agent's signal handler calls it. False for anything malformed.
bool parse_resize_decision(const char* text, std::size_t size, ResizeDecision* out) noexcept;

/// A signal name or number as an administrator or a user writes it
/// ("USR1", "SIGUSR2", "12"): the signal number, or 0 when it is none
/// that a program can catch (KILL, STOP, out of 1..64).
int signal_number(std::string_view name) noexcept;

/// "USR1", "USR2", "URG" or the number, for messages.
std::string signal_name(int sig);

}  // namespace pollux

#endif  // POLLUX_RESIZE_DECISION_H

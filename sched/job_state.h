// SPDX-License-Identifier: GPL-2.0-or-later
// The words of an elastic job's state under sched/pollux, each with its
// text in one place: its phase (state= in the SystemComment), the one-word
// reason of its last decision or of having no GPUs (why=), and the hold
// reason squeue shows while sched/pollux holds it for that reason. These
// words are read back from the SystemComment after every slurmctld
// restart: the table in job_state.cc is the only place that spells them.
// The transitions that set them are in job_transitions.h.
#ifndef POLLUX_SCHED_JOB_STATE_H
#define POLLUX_SCHED_JOB_STATE_H

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace pollux::sched {

/// Where an elastic job is in its life under sched/pollux.
enum class Phase {
  kHeld,           ///< pending, held by sched/pollux: no GPUs this round
  kStarting,       ///< pending, released at `alloc`: Slurm starts it there
  kRunning,        ///< running at `alloc`
  kCheckpointing,  ///< running, signalled at `since` to checkpoint for a move to `alloc`
  kEnded,          ///< ended at `since` (why: completed, cancelled, failed, timeout, ...); no GPUs
  /// Suspended (scontrol suspend) at `since`, on `alloc`: Slurm keeps its
  /// GPUs (only its cores are freed), so sched/pollux leaves them alone
  /// until it is resumed (then run again).
  kSuspended,
};

const char* phase_name(Phase phase) noexcept;  // "held", "start", "run", "ckpt", "end", "suspended"
/// The phase a name stands for; nullopt for a word that is none.
std::optional<Phase> parse_phase(std::string_view name) noexcept;

/// The one-word reason of a job's state (why= in its SystemComment): the
/// last decision about it, why it has no GPUs, or how it ended.
class Why {
 public:
  enum Word : std::uint8_t {
    kNone,  ///< not said (a job no round has decided yet)
    // decisions
    kStart,     ///< released at the size the policy gave it
    kWait,      ///< waiting for GPUs the policy has not given it
    kGrow,      ///< resized to more GPUs
    kShrink,    ///< resized to fewer
    kMove,      ///< as many GPUs on other nodes
    kPreempt,   ///< resized to none
    kCancel,    ///< a checkpoint for a resize called off
    kRequeued,  ///< its run was ended by someone else's requeue (Slurm's, an operator's)
    // why a pending job cannot start at any size (cannot_start)
    kHeld,             ///< a user's or administrator's hold
    kDependency,       ///< dependencies remain
    kDependencyNever,  ///< a dependency can never be satisfied
    kReservation,      ///< its reservation is not active
    kPartition,        ///< none of its partitions takes new jobs
    kRefused,          ///< Slurm refused the size it was given
    kNodeFailed,       ///< requeued, still completing on a node not responding
    kLimits,           ///< Slurm allows it no size
    kBegin,            ///< a begin time in the future that no requeue set
    // what keeps a running job from growing (its view's cap=, not_grown)
    kAtMax,        ///< at the largest size its range, Slurm's limits and its batch size allow
    kProfiled,     ///< at twice the GPUs its hints profiled (Pollux's rule: grows at most 2x past them)
    kNoFreeGpus,   ///< no larger size fits in the GPUs free to it (nodes it may use, of its type)
    kRestartCost,  ///< a larger size fits, but the policy found no gain worth a restart (or gave the GPUs elsewhere)
    kSpoolFull,    ///< its agent's hint is missing and the spool is full: run as moldable
    // how it ended (state=end)
    kCompleted,
    kCancelled,
    kTimeout,
    kNodeFail,
    kPreempted,
    kDeadline,
    kOutOfMemory,
    kFailed,
    kCount  ///< (the number of words)
  };

  constexpr Why() noexcept = default;
  constexpr Why(Word word) noexcept : word_(word) {}  // NOLINT: a Word is a Why
  /// A word as the code or a test writes it ("grow"; "" is kNone). Throws
  /// std::invalid_argument for any other text: text read from outside goes
  /// through parse_why(), which never throws.
  Why(const char* text);         // NOLINT: spelled as in the comment
  Why(const std::string& text);  // NOLINT

  constexpr Word word() const noexcept { return word_; }
  /// Its text in the SystemComment ("" for kNone).
  const char* c_str() const noexcept;
  std::string_view text() const noexcept { return c_str(); }
  constexpr bool empty() const noexcept { return word_ == kNone; }
  void clear() noexcept { word_ = kNone; }

  friend constexpr bool operator==(Why a, Why b) noexcept { return a.word_ == b.word_; }
  friend constexpr bool operator!=(Why a, Why b) noexcept { return a.word_ != b.word_; }

 private:
  Word word_ = kNone;
};

std::ostream& operator<<(std::ostream& out, Why why);

/// The reason a why= text stands for ("" is kNone); nullopt for a word that
/// is none of them.
std::optional<Why> parse_why(std::string_view text) noexcept;

/// The prefix of every hold reason sched/pollux sets, so that a hold is
/// known for its own (Reason=pollux:_... in squeue).
inline constexpr const char* kHoldPrefix = "pollux";

/// The hold reason squeue shows for a job sched/pollux holds because of
/// `why`; `detail` is Slurm's reason for kLimits ("QOSMaxNodePerJobLimit")
/// and kRefused (BadConstraints when not given). A reason that holds no
/// job on its own (a decision) gives the text of waiting for GPUs.
std::string hold_reason_for(Why why, const std::string& detail = "");

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_JOB_STATE_H

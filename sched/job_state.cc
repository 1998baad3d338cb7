// SPDX-License-Identifier: GPL-2.0-or-later
// The state words and their texts (see job_state.h).
#include "job_state.h"

#include <array>
#include <ostream>
#include <stdexcept>

namespace pollux::sched {
namespace {

constexpr std::array<const char*, 6> kPhaseNames = {"held", "start", "run", "ckpt", "end", "suspended"};

// One reason: its word in the SystemComment, and the hold reason while
// sched/pollux holds a job for it (nullptr: none of its own, the job waits
// for GPUs), with `detail` in parentheses: given by the caller, else this
// default ("": none).
struct WhyRow {
  Why::Word word;
  const char* text;
  const char* hold;
  const char* detail;
};

constexpr std::array<WhyRow, Why::kCount> kWhys = {{
    {Why::kNone, "", nullptr, nullptr},
    {Why::kStart, "start", nullptr, nullptr},
    {Why::kWait, "wait", "pollux: waiting for GPUs", nullptr},
    {Why::kGrow, "grow", nullptr, nullptr},
    {Why::kShrink, "shrink", nullptr, nullptr},
    {Why::kMove, "move", nullptr, nullptr},
    {Why::kPreempt, "preempt", nullptr, nullptr},
    {Why::kCancel, "cancel", nullptr, nullptr},
    {Why::kRequeued, "requeued", nullptr, nullptr},
    {Why::kHeld, "held", nullptr, nullptr},
    {Why::kDependency, "dependency", "pollux: waiting for its dependency", nullptr},
    {Why::kDependencyNever, "dependency-never", "pollux: dependency never satisfied", nullptr},
    {Why::kReservation, "reservation", "pollux: reservation not active", nullptr},
    {Why::kPartition, "partition", "pollux: partition down or inactive", nullptr},
    {Why::kRefused, "refused", "pollux: Slurm refused its size", "BadConstraints"},
    {Why::kNodeFailed, "node-failed",
     "pollux: its last run's node stopped responding; waiting for Slurm to set it DOWN", nullptr},
    {Why::kLimits, "limits", "pollux: no size Slurm allows", ""},
    {Why::kBegin, "begin", "pollux: waiting for its begin time", nullptr},
    {Why::kAtMax, "at-max", nullptr, nullptr},
    {Why::kProfiled, "profiled", nullptr, nullptr},
    {Why::kNoFreeGpus, "no-free-gpus", nullptr, nullptr},
    {Why::kRestartCost, "restart-cost", nullptr, nullptr},
    {Why::kSpoolFull, "spool-full", nullptr, nullptr},
    {Why::kCompleted, "completed", nullptr, nullptr},
    {Why::kCancelled, "cancelled", nullptr, nullptr},
    {Why::kTimeout, "timeout", nullptr, nullptr},
    {Why::kNodeFail, "node-fail", nullptr, nullptr},
    {Why::kPreempted, "preempted", nullptr, nullptr},
    {Why::kDeadline, "deadline", nullptr, nullptr},
    {Why::kOutOfMemory, "out-of-memory", nullptr, nullptr},
    {Why::kFailed, "failed", nullptr, nullptr},
}};

// The table is in Word order, so a word is its row's index.
constexpr bool in_order() {
  for (std::size_t i = 0; i < kWhys.size(); ++i)
    if (kWhys[i].word != static_cast<Why::Word>(i)) return false;
  return true;
}
static_assert(in_order(), "kWhys must list every Why::Word in order");

const WhyRow& row_of(Why why) noexcept {
  const auto i = static_cast<std::size_t>(why.word());
  return kWhys[i < kWhys.size() ? i : 0];
}

Why known(std::string_view text) {
  if (auto w = parse_why(text)) return *w;
  throw std::invalid_argument("no job-state reason is called \"" + std::string(text) + "\"");
}

}  // namespace

const char* phase_name(Phase phase) noexcept {
  const auto i = static_cast<std::size_t>(phase);
  return i < kPhaseNames.size() ? kPhaseNames[i] : "?";
}

std::optional<Phase> parse_phase(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kPhaseNames.size(); ++i)
    if (name == kPhaseNames[i]) return static_cast<Phase>(i);
  return std::nullopt;
}

Why::Why(const char* text) : Why(known(text != nullptr ? text : "")) {}
Why::Why(const std::string& text) : Why(known(text)) {}

const char* Why::c_str() const noexcept { return row_of(*this).text; }

std::ostream& operator<<(std::ostream& out, Why why) { return out << why.text(); }

std::optional<Why> parse_why(std::string_view text) noexcept {
  for (const WhyRow& r : kWhys)
    if (text == r.text) return Why(r.word);
  return std::nullopt;
}

std::string hold_reason_for(Why why, const std::string& detail) {
  const WhyRow& r = row_of(why);
  if (r.hold == nullptr) return kWhys[Why::kWait].hold;
  std::string out = r.hold;
  const std::string shown = detail.empty() && r.detail != nullptr ? r.detail : detail;
  if (r.detail != nullptr && !shown.empty()) out += " (" + shown + ")";
  return out;
}

}  // namespace pollux::sched

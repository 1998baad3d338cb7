// SPDX-License-Identifier: GPL-2.0-or-later
// Round statistics (see round_stats.h).
#include "round_stats.h"

#include <pwd.h>

#include <algorithm>
#include <vector>

namespace pollux::sched {
namespace {

// A decision's kind: what it changes in Slurm; empty when nothing.
std::string decision_kind(const JobDecision& d) {
  switch (d.action) {
    case Action::kNone: return {};
    case Action::kHold: return "hold";
    case Action::kRelease: return "start";
    case Action::kSignal: return d.state.why.c_str();  // resize_reason(): grow, shrink, move, preempt
    case Action::kRequeue: return "requeue";
  }
  return {};
}

void add_to(RoundTotals& t, const Snapshot& snap, const RoundResult& result, const RoundRecord& r) {
  ++t.rounds[round_kind_name(r.kind)];
  t.phases["snapshot"].add(r.snapshot_ms);
  t.phases["plan"].add(r.plan_ms);
  if (r.enacted) t.phases["enact"].add(r.enact_ms);
  t.phases["total"].add(r.total_ms);
  t.jobs_considered += static_cast<long long>(snap.jobs.size());
  t.nodes_powered_down += r.nodes_powered_down;
  t.nodes_powered_up += r.nodes_powered_up;
  for (const JobDecision& d : result.decisions) {
    const std::string kind = decision_kind(d);
    if (kind.empty()) continue;
    ++t.decisions[kind];
    ++t.reasons[d.state.why.empty() ? "none" : d.state.why.c_str()];
    if (d.action != Action::kRequeue || d.job >= snap.jobs.size()) continue;
    // The requeue of a resize: on the agent's acknowledgement of the
    // checkpoint signal, else at the time-out (as plan_round judged it).
    const ElasticJobSnapshot& j = snap.jobs[d.job];
    if (!j.state || j.state->phase != Phase::kCheckpointing) continue;
    ++(d.checkpoint_timed_out ? t.checkpoint_timeouts : t.checkpoint_acks);
  }
  for (const ElasticJobSnapshot& j : snap.jobs)
    if (j.refused_now) ++t.refused_sizes;
  t.refused_sizes += r.refused_sizes;
  t.enact_errors += r.enact_errors;
  for (const auto& [reason, n] : r.hints_rejected) t.hints_rejected[reason] += n;
}

}  // namespace

const char* round_kind_name(RoundKind kind) noexcept {
  switch (kind) {
    case RoundKind::kPeriodic: return "periodic";
    case RoundKind::kArrivals: return "arrivals";
    case RoundKind::kTransition: return "transition";
  }
  return "unknown";
}

void PhaseTimes::add(double ms) noexcept {
  ++count;
  last_ms = ms;
  sum_ms += ms;
  max_ms = std::max(max_ms, ms);
}

RoundStats::RoundStats(double now) {
  start_.since = now;
  reset_.since = now;
}

void RoundStats::reset(double now) {
  reset_ = RoundTotals{};
  reset_.since = now;
}

void RoundStats::add(const Snapshot& snap, const std::vector<JobInput>& inputs, const RoundResult& result,
                     const RoundRecord& record) {
  add_to(start_, snap, result, record);
  add_to(reset_, snap, result, record);
  last_round_ = snap.now;
  spool_dir_ = record.spool_dir;
  spool_ = record.spool;
  gpus_ = gpu_use(snap, result);
  if (result.autoscale.active && !result.autoscale.places_only) {  // (an arrivals round's plan sizes nothing)
    autoscale_ = result.autoscale;
    autoscale_.usable.clear();
    autoscale_.power_down.clear();
    autoscale_.power_up.clear();
  } else if (record.kind == RoundKind::kPeriodic) {
    autoscale_ = AutoscalePlan{};  // turned off
  }
  gpus_by_type_.clear();
  if (snap.gpu_types.size() >= 2)
    for (std::size_t t = 0; t < snap.gpu_types.size(); ++t)
      gpus_by_type_.push_back({gpu_type_name(snap.gpu_types[t]), gpu_use(snap, result, static_cast<int>(t))});
  jobs_.clear();
  for (const JobDecision& d : result.decisions) {
    if (d.job >= snap.jobs.size()) continue;
    const ElasticJobSnapshot& j = snap.jobs[d.job];
    JobRow row;
    row.job_id = j.job_id;
    row.uid = j.uid;
    auto user = users_.find(j.uid);
    if (user == users_.end()) user = users_.emplace(j.uid, user_name(j.uid)).first;
    row.user = user->second;
    row.partition = j.partition;
    row.phase = phase_name(d.state.phase);
    row.why = d.state.why.c_str();
    row.cap = d.view.cap.c_str();
    row.action = action_name(d.action);
    row.gpus = d.view.gpus;
    row.nodes = d.view.nodes;
    row.batch = d.view.batch;
    row.goodput = d.view.goodput;
    row.efficiency = d.view.efficiency;
    row.speedup = d.view.speedup;
    row.has_model = d.view.has_model;
    row.running = j.running;
    row.restarts = j.restarts;
    if (d.job < inputs.size()) row.restart_seconds = inputs[d.job].restart_seconds;
    if (snap.gpu_types.size() >= 2 && d.view.gpus > 0) row.gpu_type = gpu_type_name(d.view.gpu_type);
    jobs_.push_back(std::move(row));
  }
  std::sort(jobs_.begin(), jobs_.end(), [](const JobRow& a, const JobRow& b) { return a.job_id < b.job_id; });
  // Ended jobs' users are forgotten.
  for (auto it = users_.begin(); it != users_.end();)
    it = std::any_of(jobs_.begin(), jobs_.end(), [&](const JobRow& r) { return r.uid == it->first; })
             ? std::next(it)
             : users_.erase(it);
}

double RoundStats::cluster_goodput() const noexcept {
  double sum = 0;
  for (const JobRow& r : jobs_)
    if (r.running) sum += r.goodput;
  return sum;
}

GpuUse gpu_use(const Snapshot& snap, const RoundResult& result, int type) {
  GpuUse u;
  for (const NodeSnapshot& n : snap.nodes) {
    if (type >= 0 && n.type != type) continue;
    u.total += n.gpus;
    u.rigid += n.rigid_gpus;
    if (n.power == Power::kOff) u.powered_down += n.gpus;
    if (n.power == Power::kBooting) u.booting += n.gpus;
  }
  // A running job's kind is the round's word for it (its decision's view):
  // moldable until its agent announced a resize signal the site allows.
  for (const JobDecision& d : result.decisions) {
    if (d.job >= snap.jobs.size()) continue;
    const ElasticJobSnapshot& j = snap.jobs[d.job];
    if (!j.running && !j.suspended) continue;
    if (type >= 0 && placement_type(j.current, snap.nodes) != type) continue;
    const int gpus = placement_gpus(j.current);
    (j.suspended ? u.suspended : d.view.kind == "moldable" ? u.moldable : u.elastic) += gpus;
  }
  u.idle = std::max(0, u.total - u.elastic - u.moldable - u.rigid - u.suspended);
  return u;
}

std::string gpu_type_name(const std::string& type) { return type.empty() ? std::string(kUntypedGpuType) : type; }

std::string user_name(std::uint32_t uid) {
  std::vector<char> buf(16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
      found->pw_name != nullptr)
    return found->pw_name;
  return std::to_string(uid);
}

}  // namespace pollux::sched

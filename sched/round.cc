// SPDX-License-Identifier: GPL-2.0-or-later
// One scheduling round (see round.h).
#include "round.h"

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdio>
#include <exception>
#include <limits>
#include <numeric>
#include <utility>

#include "autoscale_round.h"
#include "job_transitions.h"
#include "pollux/autoscale.h"
#include "pollux/interference.h"
#include "pollux/job_description.h"

namespace pollux::sched {
namespace {

// GPUs per node of a uniform placement; 0 when empty, -1 when not uniform.
int uniform_share(const Placement& p) {
  int g = 0;
  for (const NodeShare& s : p) {
    if (g != 0 && s.gpus != g) return -1;
    g = s.gpus;
  }
  return g;
}

// The most GPUs a placement takes on one node; 0 when empty.
int most_per_node(const Placement& p) {
  int g = 0;
  for (const NodeShare& s : p) g = std::max(g, s.gpus);
  return g;
}

void add(std::vector<int>& use, const Placement& p, int sign = 1) {
  for (const NodeShare& s : p) use[static_cast<std::size_t>(s.node)] += sign * s.gpus;
}

bool fits(const std::vector<int>& use, const std::vector<int>& cap, const Placement& p) {
  for (const NodeShare& s : p) {
    const auto n = static_cast<std::size_t>(s.node);
    if (n >= cap.size() || use[n] + s.gpus > cap[n]) return false;
  }
  return true;
}

// Keeps GPUs free for the rigid GPU jobs at the head of the queue, first
// come first served, as Slurm's main loop would start them: stops at the
// first job that does not fit. Prefers nodes where elastic jobs hold the
// fewest GPUs, so that the fewest elastic jobs have to move.
int reserve_for_rigid(const Snapshot& snap, const std::vector<int>& elastic_use, std::vector<int>& free) {
  std::vector<std::size_t> order(snap.nodes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return elastic_use[a] < elastic_use[b]; });
  int reserved = 0;
  for (const RigidRequest& r : snap.rigid_queue) {
    std::vector<int> take(free.size(), 0);
    int placed = 0;
    // A typed request (gpu:h100:2) fits only nodes of that type.
    auto may_use = [&](std::size_t n) {
      if (!snap.nodes[n].usable) return false;
      if (r.gpu_type.empty()) return true;
      const auto t = static_cast<std::size_t>(snap.nodes[n].type);
      return t < snap.gpu_types.size() && snap.gpu_types[t] == r.gpu_type;
    };
    if (r.gpus_per_node > 0) {
      int nodes = 0;
      for (std::size_t n : order) {
        if (nodes == r.nodes) break;
        if (may_use(n) && free[n] >= r.gpus_per_node) {
          take[n] = r.gpus_per_node;
          ++nodes;
        }
      }
      if (nodes < r.nodes) break;
      placed = r.nodes * r.gpus_per_node;
    } else {
      int left = r.gpus;
      for (std::size_t n : order) {
        if (left == 0) break;
        if (!may_use(n)) continue;
        take[n] = std::min(free[n], left);
        left -= take[n];
      }
      if (left > 0 || r.gpus <= 0) break;
      placed = r.gpus;
    }
    for (std::size_t n = 0; n < free.size(); ++n) free[n] -= take[n];
    reserved += placed;
  }
  return reserved;
}

Why resize_reason(const Placement& from, const Placement& to) {
  const int a = placement_gpus(from), b = placement_gpus(to);
  if (b == 0) return Why::kPreempt;
  if (b > a) return Why::kGrow;
  if (b < a) return Why::kShrink;
  return Why::kMove;
}

// With a time limit: the runs sched/pollux did not end itself count too
// (its own requeue adds the run it ends, in plan_round). A running job's
// run is recorded (run=); once the job is seen pending again, that run is
// added up to its end (Slurm's EndTime of the requeue, else now). A run
// that ended and was followed by another between two rounds is counted up
// to the new run's start.
void count_runs(const ElasticJobSnapshot& j, double now, JobState& st) {
  if (j.suspended) return;  // its run goes on when it is resumed
  if (j.running) {
    if (st.run > 0 && j.start_time > st.run) st.used += static_cast<long long>(j.start_time - st.run);
    st.run = j.start_time;
  } else if (st.run > 0) {
    const double end = j.end_time >= st.run && j.end_time <= now ? j.end_time : now;
    st.used += static_cast<long long>(std::max(0.0, end - st.run));
    st.run = 0;
  }
}

// The job's state as this round starts: its previous one (or a new one), its
// range and submission, and its whole-life time limit once first seen
// (Slurm's limit of its first run, before sched/pollux gave any remainder)
// with the time its runs used.
JobState base_state(const Snapshot& snap, const ElasticJobSnapshot& j) {
  JobState st = j.state.value_or(adopted_state(j.range, snap.now, j.submit_time, Why::kNone));
  st.range = j.range;
  st.submit = j.submit_time;
  if (st.limit == 0 && st.used == 0 && j.time_limit > 0) st.limit = j.time_limit;
  if (st.limit > 0) count_runs(j, snap.now, st);
  return st;
}

// The snapshot's node of each name of an Alloc's node list (nullptr: not
// in the snapshot).
std::vector<std::pair<std::string_view, const NodeSnapshot*>> alloc_nodes(const Alloc& a,
                                                                         const std::vector<NodeSnapshot>& nodes) {
  std::vector<std::pair<std::string_view, const NodeSnapshot*>> out;
  std::string_view rest = a.node_list;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto it = std::find_if(nodes.begin(), nodes.end(), [&](const NodeSnapshot& n) { return n.name == name; });
    out.emplace_back(name, it == nodes.end() ? nullptr : &*it);
  }
  return out;
}

// The nodes of an allocation that are out of service or gone from the
// cluster (comma-separated; empty when none is). A node awaiting its
// registration after a slurmctld restart is neither.
std::string unusable_nodes(const Alloc& a, const std::vector<NodeSnapshot>& nodes) {
  std::string out;
  for (const auto& [name, node] : alloc_nodes(a, nodes)) {
    if (node != nullptr && (node->usable || node->awaiting_registration)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

// What the log says, once, about a job that Slurm (or an operator) requeued
// while it ran: where it ran (a checkpointing job: where it ran, not the
// size it was moving to), and that no checkpoint is waited for: a job whose
// agent wrote a hint restarts from its last checkpoint; one without an agent
// (no hint: sched/pollux knows of no checkpoint) runs its batch script again
// from the beginning.
std::string requeue_note(const Snapshot& snap, const ElasticJobSnapshot& j, const JobState& st, bool agent) {
  const JobState& ran = *j.state;
  const Alloc& run = ran.phase == Phase::kCheckpointing && !ran.from.empty() ? ran.from : ran.alloc;
  const std::string lost = unusable_nodes(run, snap.nodes);
  std::string out = "its run on " + run.node_list + " was ended by Slurm's requeue";
  out += lost.empty() ? " (by an operator, or the job itself)" : " (" + lost + " failed or was taken out of service)";
  out += agent ? "; it restarts from its last checkpoint, "
               : "; it has no agent (no hint): its batch script runs again from the beginning, ";
  out += st.alloc.empty() ? "once it gets GPUs" : "on " + st.alloc.node_list;
  if (st.limit > 0) out += " (" + std::to_string(st.used) + " s of its " + std::to_string(st.limit) + " min used)";
  return out;
}

}  // namespace

double restart_cost(const Snapshot& snap, const ElasticJobSnapshot& j, const JobInput& in, const Params& params) {
  double boot = 0;
  for (std::size_t n = 0; n < snap.nodes.size(); ++n)
    if (snap.nodes[n].usable && snap.nodes[n].power != Power::kOn && (j.allowed.empty() || j.allowed[n]))
      boot = std::max(boot, snap.nodes[n].boot_wait);
  return job_restart_delay(in.restart_seconds, params.restart_penalty) + boot;
}

namespace {

// A running job that is not resized: a moldable one (nothing in it can
// checkpoint for a resize now: can_resize), one held by a user or
// administrator (a hold takes effect at a requeue), one with less of its
// time limit left than two of its restarts cost, or one that Slurm would let
// restart at no size.
bool pinned(const Snapshot& snap, const ElasticJobSnapshot& j, const JobInput& in, const Params& params) {
  if (j.suspended) return true;  // its GPUs stay its own (Slurm keeps them)
  if (!j.running) return false;
  return !can_resize(j, in, params) || j.held_by_other ||
         time_left(j, base_state(snap, j), snap.now) < 2 * restart_cost(snap, j, in, params) ||
         !allowed_range(j);
}

// The view of a job at `shown` (decide, decide_outside): on a typed
// cluster (`typed` not null) from its model on the type of the shown
// placement, with that type and its goodput on each type it has a model
// for, at the shown size (one GPU when it has none).
JobView view_of(const Snapshot& snap, const std::optional<JobModel>& model, const TypedJobModel* typed,
                const Placement& shown) {
  const int g = std::max(0, uniform_share(shown));
  const int nodes = static_cast<int>(shown.size());
  if (typed == nullptr) return view_at(model, nodes, g);
  const int t = placement_type(shown, snap.nodes);
  const bool own = t >= 0 && static_cast<std::size_t>(t) < typed->models.size() && typed->models[t];
  JobView v = view_at(own ? typed->models[t] : model, nodes, g);
  if (t >= 0 && static_cast<std::size_t>(t) < snap.gpu_types.size()) v.gpu_type = snap.gpu_types[t];
  // goodput = speedup x one-GPU goodput: the speedup is memoised per size.
  for (std::size_t k = 0; k < typed->models.size() && k < snap.gpu_types.size(); ++k)
    if (const auto& m = typed->models[k])
      v.goodput_by_type.emplace_back(snap.gpu_types[k], (*m->speedup)(g > 0 ? nodes : 1, g > 0 ? nodes * g : 1) *
                                                            m->speedup->base_goodput());
  return v;
}

// A job left out of the round (see cannot_start): a pending one gets no
// GPUs and is held by sched/pollux with the reason, unless a user or
// administrator holds it (never touched); a running one held by them keeps
// its size (a pending checkpoint for a resize is called off); a suspended
// one keeps its GPUs and is left alone.
JobDecision decide_outside(const Snapshot& snap, std::size_t i, const JobInput& in, const TypedJobModel* typed) {
  const ElasticJobSnapshot& j = snap.jobs[i];
  JobDecision d;
  d.job = i;
  JobState& st = d.state;
  st = base_state(snap, j);
  if (j.suspended) {
    suspend(st, to_alloc(j.current, snap.nodes), snap.now);
  } else if (j.running) {
    if (st.phase == Phase::kCheckpointing) cancel_resize(st, to_alloc(j.current, snap.nodes), snap.now);
    else run_at(st, to_alloc(j.current, snap.nodes), snap.now);
  } else {
    hold(st, cannot_start(j, snap.now), snap.now);
    // Slurm's reason for "limits": its own, or the sizes it refused.
    const std::string slurms = j.no_size.empty() ? Why(Why::kRefused).c_str() : j.no_size;
    d.hold_reason = hold_reason_for(st.why, st.why == Why::kLimits ? slurms : "");
    if (!j.held_by_other && !(j.held_by_pollux && j.hold_text == d.hold_reason)) d.action = Action::kHold;
  }
  if (j.running || j.suspended) d.placement = j.current;
  d.view = view_of(snap, in.model, typed, j.running || j.suspended ? j.current : Placement{});
  d.comment = format_comment(d.view, st);
  return d;
}

}  // namespace

bool elastic_kind(const JobInput& in, const Params& params) {
  return in.resize_signal >= 1 && in.resize_signal <= 64 && ((params.resize_signals >> (in.resize_signal - 1)) & 1ULL);
}

bool has_agent(const JobInput& in) { return in.hint_restarts >= 0; }

bool can_resize(const ElasticJobSnapshot& j, const JobInput& in, const Params& params) {
  return elastic_kind(in, params) && in.hint_restarts == j.restarts;
}

const char* action_name(Action action) noexcept {
  switch (action) {
    case Action::kNone: return "none";
    case Action::kHold: return "hold";
    case Action::kRelease: return "release";
    case Action::kSignal: return "signal";
    case Action::kRequeue: return "requeue";
  }
  return "?";
}

std::optional<ElasticRange> allowed_range(const ElasticJobSnapshot& j) {
  if (!j.no_size.empty()) return std::nullopt;
  ElasticRange r = j.range;
  if (j.min_nodes_limit > 0) r.min_nodes = std::max(r.min_nodes, j.min_nodes_limit);
  if (j.max_nodes_limit > 0) r.max_nodes = std::min(r.max_nodes, j.max_nodes_limit);
  if (j.max_gpus_per_node_limit > 0) r.gpus_per_node = std::min(r.gpus_per_node, j.max_gpus_per_node_limit);
  for (const Size& s : j.refused) {
    if (r.max_nodes < r.min_nodes || r.gpus_per_node < 1) break;
    if (s.nodes > r.max_nodes || s.gpus_per_node > r.gpus_per_node) continue;  // already out
    const long fewer_nodes = static_cast<long>(std::max(0, s.nodes - r.min_nodes)) * r.gpus_per_node;
    const long fewer_gpus = static_cast<long>(r.max_nodes - r.min_nodes + 1) * std::max(0, s.gpus_per_node - 1);
    if (fewer_nodes >= fewer_gpus) r.max_nodes = std::max(r.min_nodes, s.nodes) - 1;
    else r.gpus_per_node = s.gpus_per_node - 1;
  }
  if (r.max_nodes < r.min_nodes || r.gpus_per_node < 1 || r.min_nodes < 1) return std::nullopt;
  return r;
}

bool parked_by_pollux(const ElasticJobSnapshot& j, double now) {
  return j.begin_time > now + kRequeueParking - kParkedFor && j.begin_time <= now + kRequeueParking + 1;
}

std::optional<double> requeue_start(const ElasticJobSnapshot& j, const JobState& s, Action action, double now) {
  if (s.alloc.empty() || s.phase != Phase::kStarting) return std::nullopt;
  if (action == Action::kRequeue) return now + kRequeueGap;
  if (j.running || !parked_by_pollux(j, now)) return std::nullopt;
  return std::max(s.since, now) + kRequeueGap;
}

bool requeued_by_others(const ElasticJobSnapshot& j) {
  if (j.running || j.suspended || !j.state || j.restarts == 0) return false;
  return j.state->phase == Phase::kRunning || j.state->phase == Phase::kCheckpointing;
}

Why cannot_start(const ElasticJobSnapshot& j, double now) {
  if (j.running || j.suspended) return {};
  if (j.held_by_other) return Why::kHeld;
  if (!j.blocker.empty()) return j.blocker;
  if (!allowed_range(j)) return Why::kLimits;
  if (j.begin_time > now) {
    // sched/pollux's own requeue, and Slurm's credential window after it,
    // set begin times that the enactment shortens (early_begin); so does
    // Slurm's requeue of a job that ran (its credential window).
    const bool by_requeue = j.restarts > 0 && j.state &&
                            (j.begin_time <= j.state->since + kRequeueWindow || requeued_by_others(j));
    if (!by_requeue) return Why::kBegin;
  }
  return {};
}

Why not_grown(const Snapshot& snap, const ElasticJobSnapshot& j, const JobInput& in, int max_replicas,
              const std::vector<int>& free) {
  const int held = placement_gpus(j.current);
  const ElasticRange range = allowed_range(j).value_or(j.range);
  const int by_batch = in.model ? in.model->max_gpus_by_batch() : 0;
  if (held >= range.max_gpus() || (j.max_gpus_limit > 0 && held >= j.max_gpus_limit) ||
      (by_batch > 0 && held >= by_batch))
    return Why::kAtMax;
  // Below those, the policy's cap is max(2 x profiled, held): the profile's.
  if (held >= max_replicas) return Why::kProfiled;
  // A larger size of its own shape (n nodes x g GPUs) in what is free to
  // it: its own GPUs and the unused ones on the nodes it may use, of the
  // GPU type it runs on.
  const int type = placement_type(j.current, snap.nodes);
  for (int g = 1; g <= range.gpus_per_node; ++g) {
    int nodes = 0;
    for (std::size_t n = 0; n < snap.nodes.size() && n < free.size(); ++n) {
      if (!snap.nodes[n].usable || (!j.allowed.empty() && (n >= j.allowed.size() || !j.allowed[n]))) continue;
      if (snap.gpu_types.size() > 1 && snap.nodes[n].type != type) continue;
      int own = 0;
      for (const NodeShare& s : j.current)
        if (static_cast<std::size_t>(s.node) == n) own = s.gpus;
      if (free[n] + own >= g) ++nodes;
    }
    nodes = std::min(nodes, range.max_nodes);
    if (nodes * g > held && nodes * g <= max_replicas && range.allows(nodes, g)) return Why::kRestartCost;
  }
  return Why::kNoFreeGpus;
}

double time_left(const ElasticJobSnapshot& j, const JobState& s, double now) {
  if (s.limit <= 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(s.limit * 60 - s.used) - (j.running ? std::max(0.0, now - j.start_time) : 0.0);
}

double expected_end(double now, const Params& params) {
  return now + params.interval + params.checkpoint_timeout + 60;
}

std::string node_list(const Placement& p, const std::vector<NodeSnapshot>& nodes) {
  std::string out;
  for (const NodeShare& s : p) {
    if (!out.empty()) out += ',';
    out += nodes[static_cast<std::size_t>(s.node)].name;
  }
  return out;
}

Alloc to_alloc(const Placement& p, const std::vector<NodeSnapshot>& nodes) {
  Alloc a;
  if (p.empty()) return a;
  a.nodes = static_cast<int>(p.size());
  a.gpus_per_node = p.front().gpus;
  a.node_list = node_list(p, nodes);
  return a;
}

Placement to_placement(const Alloc& a, const std::vector<NodeSnapshot>& nodes) {
  if (a.empty()) return {};
  Placement p;
  for (const auto& [name, node] : alloc_nodes(a, nodes)) {
    if (node == nullptr) return {};
    p.push_back({static_cast<int>(node - nodes.data()), a.gpus_per_node});
  }
  p = normalize_placement(std::move(p));
  if (static_cast<int>(p.size()) != a.nodes) return {};
  return p;
}

bool typed_cluster(const Snapshot& snap) {
  return std::any_of(snap.gpu_types.begin(), snap.gpu_types.end(), [](const std::string& t) { return !t.empty(); });
}

const TypeRatios* learn_type_ratios(const Snapshot& snap, const std::vector<JobInput>& inputs, const Params& params,
                                    TypeSpeedLearner& learner) {
  if (snap.gpu_types.size() < 2) return nullptr;
  const TypeRatios& ratios = learner.ratios(snap.gpu_types, params.gpu_type_speeds);
  std::vector<std::uint32_t> alive;
  for (std::size_t i = 0; i < snap.jobs.size() && i < inputs.size(); ++i) {
    alive.push_back(snap.jobs[i].job_id);
    if (inputs[i].model)  // only the types its hint names: a fit placed by where it runs may be stale
      learner.learn(snap.jobs[i].job_id, fits_by_type(inputs[i].model, snap.gpu_types, -1), inputs[i].model->limits);
  }
  learner.forget_others(std::move(alive));
  return &ratios;
}

int placement_type(const Placement& p, const std::vector<NodeSnapshot>& nodes) {
  if (p.empty() || static_cast<std::size_t>(p.front().node) >= nodes.size()) return -1;
  return nodes[static_cast<std::size_t>(p.front().node)].type;
}


namespace {

// ---------------------------------------------------------------------------
// The stages of plan_round, in its order.

// Capacity: the GPUs on each node that the elastic jobs may share (free of
// rigid jobs and of pinned elastic ones, less what the rigid queue needs;
// on nodes that take no new work, only what running elastic jobs hold
// there, so that they may stay), and the GPUs kept for the rigid queue.
struct Capacity {
  std::vector<int> gpus;
  int reserved = 0;
};

Capacity capacity(const Snapshot& snap, const std::vector<JobInput>& inputs, const Params& params) {
  const std::size_t node_count = snap.nodes.size();
  std::vector<int> elastic_use(node_count, 0), pinned_use(node_count, 0);
  for (const ElasticJobSnapshot& j : snap.jobs) {
    if (j.running) add(elastic_use, j.current);
  }
  for (std::size_t i = 0; i < snap.jobs.size(); ++i)
    if (pinned(snap, snap.jobs[i], inputs[i], params)) add(pinned_use, snap.jobs[i].current);  // stays as it is
  Capacity c;
  c.gpus.assign(node_count, 0);
  for (std::size_t n = 0; n < node_count; ++n)
    c.gpus[n] = snap.nodes[n].usable
                    ? std::max(0, snap.nodes[n].gpus - snap.nodes[n].rigid_gpus - pinned_use[n])
                    : 0;
  c.reserved = reserve_for_rigid(snap, elastic_use, c.gpus);
  // A node awaiting registration keeps its whole capacity, so that what
  // was promised there still fits (ask_policy places nothing new there).
  for (std::size_t n = 0; n < node_count; ++n) {
    if (snap.nodes[n].awaiting_registration)
      c.gpus[n] = std::max(0, snap.nodes[n].gpus - snap.nodes[n].rigid_gpus - pinned_use[n]);
    else if (!snap.nodes[n].usable)
      c.gpus[n] = std::max(0, elastic_use[n] - pinned_use[n]);
  }
  return c;
}

// Which jobs the policy schedules (indices into snap.jobs) and which are
// left out of the round: held by others, pinned, or unable to start.
struct Selection {
  std::vector<std::size_t> scheduled;
  std::vector<std::size_t> outside;
};

Selection select_jobs(const Snapshot& snap, const std::vector<JobInput>& inputs, const Params& params) {
  Selection s;
  for (std::size_t i = 0; i < snap.jobs.size(); ++i) {
    if (!snap.jobs[i].held_by_other && !pinned(snap, snap.jobs[i], inputs[i], params) &&
        cannot_start(snap.jobs[i], snap.now).empty())
      s.scheduled.push_back(i);
    else
      s.outside.push_back(i);
  }
  return s;
}

Phase phase_of(const ElasticJobSnapshot& j) { return j.state ? j.state->phase : Phase::kHeld; }

// Promises, per scheduled job: what it keeps without a (usable) answer
// from the policy (`keep`), and the policy's view of its present
// (`current`): running allocations first, then promises (checkpointing,
// starting), each only while it still fits in the capacity.
struct Promises {
  std::vector<Placement> keep;
  std::vector<Placement> current;
};

Promises promises(const Snapshot& snap, const std::vector<std::size_t>& sched, const std::vector<int>& cap) {
  Promises out;
  out.keep.resize(sched.size());
  std::vector<Placement>& keep = out.keep;
  for (std::size_t k = 0; k < sched.size(); ++k) {
    const ElasticJobSnapshot& j = snap.jobs[sched[k]];
    const Phase ph = phase_of(j);
    if (j.running && ph != Phase::kCheckpointing)
      keep[k] = j.current;
    else if (ph != Phase::kHeld && (j.running || unusable_nodes(j.state->alloc, snap.nodes).empty()))
      keep[k] = j.decided;  // a pending job's promise on a node that failed is no promise: placed afresh
    // A promise Slurm's bounds no longer allow is decided again (by an
    // arrivals round too); a running job then keeps its size.
    const int g = uniform_share(keep[k]);
    if (!keep[k].empty() && keep[k] != j.current &&
        (g <= 0 || !allowed_range(j)->allows(static_cast<int>(keep[k].size()), g)))
      keep[k] = j.running ? j.current : Placement{};
  }
  out.current.resize(sched.size());
  std::vector<int> use(cap.size(), 0);
  for (int pass = 0; pass < 3; ++pass) {
    for (std::size_t k = 0; k < sched.size(); ++k) {
      const ElasticJobSnapshot& j = snap.jobs[sched[k]];
      const Phase ph = phase_of(j);
      const int job_pass = (j.running && ph != Phase::kCheckpointing) ? 0 : ph == Phase::kCheckpointing ? 1 : 2;
      if (job_pass != pass || keep[k].empty() || !fits(use, cap, keep[k])) continue;
      out.current[k] = keep[k];
      add(use, out.current[k]);
    }
  }
  return out;
}

// Whether a placement uses a node awaiting registration.
bool awaits_registration(const Placement& p, const std::vector<NodeSnapshot>& nodes) {
  return std::any_of(p.begin(), p.end(), [&](const NodeShare& s) {
    return static_cast<std::size_t>(s.node) < nodes.size() && nodes[static_cast<std::size_t>(s.node)].awaiting_registration;
  });
}

// A job left as it is across a slurmctld restart: it runs, or was promised
// what it keeps (`keep`, which still fits), on a node slurmctld has not
// heard from yet; or it was promised GPUs before the restart, less than
// kRestartPromiseHold ago. The restarted plugin carries out what was
// decided before the restart (a checkpoint's move, a requeued job's
// promise) rather than decide afresh on a cluster whose state it does not
// know yet, nor move a promise in the seconds before Slurm starts it.
// (`since` is in whole seconds: a promise of the load's own second is this
// slurmctld's.)
bool kept_across_restart(const Snapshot& snap, const ElasticJobSnapshot& j, const Placement& keep,
                         const Placement& current) {
  if (keep.empty() || current != keep) return false;
  if (awaits_registration(j.current, snap.nodes) || awaits_registration(keep, snap.nodes)) return true;
  return !j.running && phase_of(j) == Phase::kStarting && snap.loaded > 0 && j.state->since < std::floor(snap.loaded) &&
         snap.now < snap.loaded + kRestartPromiseHold;
}

// Type models: on a typed cluster, each job's model per GPU type (index
// as snap.jobs), its fits where it ran and estimates elsewhere through
// `ratios` (gpu_types.h); empty on an untyped cluster.
std::vector<TypedJobModel> type_models(const Snapshot& snap, const std::vector<JobInput>& inputs, const Params& params,
                                       const TypeRatios* ratios, const RoundRules& rules) {
  std::vector<TypedJobModel> out;
  if (!typed_cluster(snap)) return out;
  std::optional<TypeRatios> seeded;
  if (ratios == nullptr || ratios->types() != static_cast<int>(snap.gpu_types.size())) {
    seeded.emplace(seeded_type_ratios(snap.gpu_types, params.gpu_type_speeds));
    ratios = &*seeded;
  }
  out.reserve(snap.jobs.size());
  for (std::size_t i = 0; i < snap.jobs.size(); ++i) {
    const ElasticJobSnapshot& j = snap.jobs[i];
    out.push_back(typed_job_model(inputs[i].model, allowed_range(j).value_or(j.range), snap.gpu_types,
                                  j.running || j.suspended ? placement_type(j.current, snap.nodes) : -1, *ratios,
                                  rules.uniform_placements));
  }
  return out;
}

const TypedJobModel* typed_of(const std::vector<TypedJobModel>& typed, std::size_t i) {
  return i < typed.size() ? &typed[i] : nullptr;
}

// The policy's view of one job: libgoodput's describe_elastic_job, the
// rule pollux-sim applies too; on a cluster of several GPU types, with its
// speedup on each.
JobInfo policy_view(const Snapshot& snap, const ElasticJobSnapshot& j, const JobInput& in, const Placement& current,
                    const Params& params, bool arrivals_only, const TypedJobModel* typed, const RoundRules& rules) {
  const ElasticRange range = *allowed_range(j);  // jobs without one are outside
  ElasticJobState es;
  static_cast<AgentMeasures&>(es) = in;
  // D as the policy weighs it, boots included (restart_cost): at least
  // the penalty, so describe_elastic_job's D is this.
  es.restart_seconds = restart_cost(snap, j, in, params);
  es.id = j.job_id;
  es.submit_time = j.submit_time;
  es.now = snap.now;
  es.restarts = j.restarts;
  if (j.running && j.restarts > 0) es.run_start = j.start_time;  // a restart's cost weighs on its run
  if (j.running) es.attained_service = std::max(0.0, snap.now - j.start_time) * placement_gpus(j.current);
  if (in.attained_service) es.attained_service = *in.attained_service;
  // Without uniform placements every size counts; the node range is the
  // policy's to keep (JobInfo::min_nodes, max_nodes).
  es.speedup = rules.uniform_placements ? range_speedup(in.model, range) : model_speedup(in.model);
  es.held_gpus = placement_gpus(current);
  es.max_gpus_by_batch = in.model ? in.model->max_gpus_by_batch() : 0;
  es.min_gpus = range.min_gpus();
  es.max_gpus = range.max_gpus();
  es.max_gpus_limit = j.max_gpus_limit;
  es.requested_gpus = j.range.max_gpus();
  es.allowed_nodes = j.allowed;
  if (typed != nullptr && snap.gpu_types.size() > 1) es.speedup_by_type = typed->speedups;
  if (range.max_nodes < j.range.max_nodes) es.max_nodes = range.max_nodes;
  if (range.min_nodes > 1) es.min_nodes = range.min_nodes;
  return describe_elastic_job(es, params.restart_penalty, arrivals_only);
}

// Validation: why the policy's placements for the jobs `asked` (indices
// into snap.jobs) cannot be used, "" when they can: one per job, within
// the nodes' GPUs and on nodes of one GPU type (check_allocation), each
// uniform (unless `rules` allow any placement: then at most the range's
// GPUs per node on each node) and in its job's allowed range.
std::string validate(const Snapshot& snap, const std::vector<std::size_t>& asked, const std::vector<JobInfo>& jobs,
                     const std::vector<NodeInfo>& nodes, const std::vector<Placement>& out, const Policy& policy,
                     const RoundRules& rules) {
  if (out.size() != asked.size())
    return "the policy returned " + std::to_string(out.size()) + " placements for " + std::to_string(asked.size()) +
           " jobs";
  if (auto bad = check_allocation(jobs, nodes, out, policy.options())) return *bad;
  for (std::size_t x = 0; x < asked.size(); ++x) {
    const int g = rules.uniform_placements ? uniform_share(out[x]) : most_per_node(out[x]);
    const int n = static_cast<int>(out[x].size());
    const ElasticJobSnapshot& j = snap.jobs[asked[x]];
    const ElasticRange range = *allowed_range(j);
    if (g < 0 || (g > 0 && !range.allows(n, g)))
      return "the policy gave job " + std::to_string(j.job_id) + " a size outside its range " + format_range(range);
  }
  return {};
}

// The policy: sizes the scheduled jobs (every one, or in an arrivals round
// only those holding and promised nothing, in the GPUs the others leave)
// and returns each scheduled job's placement: the policy's where its
// answer passed validation, else what it keeps. Records the run (and why
// its answer was not used) in `result`.
std::vector<Placement> ask_policy(const Snapshot& snap, const std::vector<JobInput>& inputs, const Params& params,
                                  Policy* policy, bool arrivals_only, const std::vector<std::size_t>& sched,
                                  const std::vector<int>& cap, const Promises& promised,
                                  const std::vector<TypedJobModel>& typed, const RoundRules& rules,
                                  RoundResult& result, std::vector<int>& max_replicas) {
  std::vector<Placement> chosen = promised.keep;
  max_replicas.assign(sched.size(), 0);
  std::vector<std::size_t> ask;  // positions in sched
  std::vector<int> ask_cap = cap;
  for (std::size_t k = 0; k < sched.size(); ++k) {
    const bool kept = kept_across_restart(snap, snap.jobs[sched[k]], promised.keep[k], promised.current[k]);
    if (!kept && (!arrivals_only || promised.keep[k].empty())) ask.push_back(k);
    else add(ask_cap, promised.current[k], -1);
  }
  for (std::size_t n = 0; n < ask_cap.size(); ++n)
    if (snap.nodes[n].awaiting_registration) ask_cap[n] = 0;  // nothing new until it registers
  // Goodput auto-scaling sizes the cluster in periodic rounds, with no job
  // to size too (the last one ended: its nodes are no longer worth running),
  // and limits where an arrivals round places new jobs.
  const bool scale = policy != nullptr && params.autoscale == AutoscaleMode::kGoodput;
  if (policy == nullptr || (ask.empty() && (!scale || arrivals_only)) ||
      (arrivals_only && std::none_of(ask_cap.begin(), ask_cap.end(), [](int g) { return g > 0; })))
    return chosen;
  std::vector<JobInfo> jobs;
  std::vector<Placement> ask_current;
  std::vector<std::size_t> asked;  // indices into snap.jobs
  jobs.reserve(ask.size());
  for (std::size_t k : ask) {
    jobs.push_back(policy_view(snap, snap.jobs[sched[k]], inputs[sched[k]], promised.current[k], params,
                               arrivals_only, typed_of(typed, sched[k]), rules));
    ask_current.push_back(promised.current[k]);
    asked.push_back(sched[k]);
  }
  if (scale && arrivals_only) {
    // The cluster's plan as the next periodic round makes it, the new jobs
    // counted: they go only to the nodes worth running, not to a node that
    // round would give back.
    std::vector<JobInfo> all;
    for (std::size_t k = 0; k < sched.size(); ++k)
      all.push_back(policy_view(snap, snap.jobs[sched[k]], inputs[sched[k]], promised.current[k], params, false,
                                typed_of(typed, sched[k]), rules));
    std::vector<int> all_cap = cap;
    for (std::size_t n = 0; n < all_cap.size(); ++n)
      if (snap.nodes[n].awaiting_registration) all_cap[n] = 0;
    result.autoscale = plan_autoscale(snap, params, all, promised.current, all_cap);
    result.autoscale.places_only = true;
    for (std::size_t n = 0; n < ask_cap.size(); ++n)
      if (!result.autoscale.usable[n]) ask_cap[n] = 0;
  } else if (scale) {
    // The nodes beyond the target take nothing this round; a job there is
    // placed afresh (as pollux-sim's --autoscale goodput does).
    result.autoscale = plan_autoscale(snap, params, jobs, ask_current, ask_cap);
    const std::vector<bool>& usable = result.autoscale.usable;
    for (std::size_t n = 0; n < ask_cap.size(); ++n)
      if (!usable[n]) ask_cap[n] = 0;
    for (Placement& p : ask_current)
      if (std::any_of(p.begin(), p.end(), [&](const NodeShare& s) { return !usable[static_cast<std::size_t>(s.node)]; }))
        p.clear();
    if (ask.empty()) return chosen;
  }
  std::vector<NodeInfo> nodes(cap.size());
  for (std::size_t n = 0; n < cap.size(); ++n) {
    nodes[n].gpus = std::max(0, ask_cap[n]);
    if (snap.gpu_types.size() > 1) nodes[n].type = snap.nodes[n].type;
  }
  try {
    std::vector<Placement> out = policy->optimize(jobs, nodes, ask_current, snap.now);
    result.report = policy->last_report();
    result.policy_ran = true;
    for (Placement& p : out) p = normalize_placement(std::move(p));
    result.error = validate(snap, asked, jobs, nodes, out, *policy, rules);
    if (result.error.empty() && policy->options().interference_avoidance) {
      // (The jobs it did not size, where they run: pollux/interference.h.)
      std::vector<bool> asked(sched.size(), false);
      for (std::size_t k : ask) asked[k] = true;
      std::vector<Placement> others;
      for (std::size_t k = 0; k < sched.size(); ++k)
        if (!asked[k]) others.push_back(promised.current[k]);
      keep_distributed_apart(others, out);
    }
    // (The jobs' summed speedups, divided by the GPUs paid once the round
    // is carried out: paid_utility.)
    if (result.error.empty() && !arrivals_only) result.utility = cluster_utility(jobs, out, 1);
    if (result.error.empty())
      for (std::size_t x = 0; x < ask.size(); ++x) {
        chosen[ask[x]] = std::move(out[x]);
        max_replicas[ask[x]] = jobs[x].max_replicas;
      }
  } catch (const std::exception& e) {
    result.error = std::string("the policy failed: ") + e.what();
  }
  return chosen;
}

// RoundResult::utility: ask_policy's summed speedups over the GPUs paid
// once the round is carried out that the policy may use: nodes on or
// booting but not powered down, resumed, or where a job is placed (Slurm
// resumes those); not those wholly held by others (`cap`: no GPU left).
void paid_utility(RoundResult& result, const Snapshot& snap, const std::vector<int>& cap) {
  if (result.utility < 0) return;
  const AutoscalePlan& plan = result.autoscale;
  std::vector<bool> paid(snap.nodes.size(), false);
  for (std::size_t n = 0; n < snap.nodes.size(); ++n) paid[n] = snap.nodes[n].power != Power::kOff;
  for (std::size_t n : plan.power_down) paid[n] = false;
  for (std::size_t n : plan.power_up) paid[n] = true;
  for (const JobDecision& d : result.decisions)
    for (const NodeShare& s : to_placement(d.state.alloc, snap.nodes))
      if (static_cast<std::size_t>(s.node) < paid.size()) paid[static_cast<std::size_t>(s.node)] = true;
  int gpus = 0;
  for (std::size_t n = 0; n < snap.nodes.size() && n < cap.size(); ++n)
    if (paid[n] && snap.nodes[n].usable && cap[n] > 0) gpus += snap.nodes[n].gpus;
  result.utility = gpus > 0 ? result.utility / gpus : 0.0;
}

// State transitions of a scheduled job given placement `p`: what changes
// in Slurm (hold, release, signal, requeue) and its new state.
JobDecision decide(const Snapshot& snap, std::size_t i, const JobInput& in, const Placement& p,
                   const Params& params, const TypedJobModel* typed) {
  const ElasticJobSnapshot& j = snap.jobs[i];
  JobDecision d;
  d.job = i;
  const JobState prev = base_state(snap, j);
  JobState& st = d.state;
  st = prev;
  const Alloc alloc = to_alloc(p, snap.nodes);

  if (!j.running) {
    if (p.empty()) {
      // A job held at submission gets sched/pollux's own hold (and reason).
      d.hold_reason = hold_reason_for(Why::kWait);
      const bool held_for_gpus = j.hold_text.empty() || j.hold_text == d.hold_reason;
      d.action = j.held_by_pollux && j.state && held_for_gpus ? Action::kNone : Action::kHold;
      hold(st, requeued_by_others(j) ? Why::kRequeued : Why::kWait, snap.now);
    } else {
      const bool unchanged = !j.held_by_pollux && prev.phase == Phase::kStarting && p == j.decided;
      d.action = unchanged ? Action::kNone : Action::kRelease;
      if (unchanged) st.alloc = alloc;  // the promise stands
      else release(st, alloc, snap.now);
      if (requeued_by_others(j)) st.why = Why::kRequeued;
    }
  } else if (prev.phase != Phase::kCheckpointing) {
    if (p == j.current) {
      run_at(st, to_alloc(j.current, snap.nodes), snap.now);
    } else {
      signal_resize(st, to_alloc(j.current, snap.nodes), alloc, resize_reason(j.current, p), snap.now);
      if (in.immediate_checkpoint) {  // acknowledged at once: requeued at its new size now
        d.action = Action::kRequeue;
        requeue(st, j.start_time, snap.now);
      } else {
        d.action = Action::kSignal;
        d.signal = in.resize_signal;
      }
    }
  } else if (p == j.current) {  // checkpointing, and the move is no longer wanted
    cancel_resize(st, to_alloc(j.current, snap.nodes), snap.now);
  } else {
    retarget_resize(st, to_alloc(j.current, snap.nodes), alloc, resize_reason(j.current, p));
    const bool acked = in.checkpoint_ack && *in.checkpoint_ack >= prev.since;
    if (acked || snap.now >= prev.since + params.checkpoint_timeout) {
      d.action = Action::kRequeue;
      d.checkpoint_timed_out = !acked;
      if (!acked) {
        char timeout[32];
        std::snprintf(timeout, sizeof timeout, "%g", params.checkpoint_timeout);
        d.note = std::string("no acknowledgement of the checkpoint signal within pollux_checkpoint_timeout=") +
                 timeout + " s: requeued at its new size all the same; it restarts from its last checkpoint";
      }
      requeue(st, j.start_time, snap.now);
    }
  }

  if (requeued_by_others(j)) d.note = requeue_note(snap, j, st, has_agent(in));
  d.placement = p;
  d.view = view_of(snap, in.model, typed, st.phase == Phase::kRunning ? j.current : p);
  d.comment = format_comment(d.view, st);
  return d;
}

// What every decision says for people and for Slurm's backfill: the job's
// kind (the comment's kind=), when a requeued job starts again (start=),
// and for running jobs without a time limit the EndTime backfill plans
// with, refreshed once it is a round old (it never comes within a minute
// of now).
// What caps a running job's size (the comment's cap=): spool-full while
// its hint is missing in a full spool; else the reason a round whose
// policy answer was used gave (`kept`, not_grown()); else, while it runs
// on at the size it had, the one its comment already says.
Why cap_of(const Snapshot& snap, const ElasticJobSnapshot& j, const JobInput& in, const Params& params,
           const JobDecision& d, Why kept) {
  if (!j.running || d.state.phase != Phase::kRunning) return {};
  if (snap.spool_full && !elastic_kind(in, params) && in.hint_restarts < 0 && !in.model) return Why::kSpoolFull;
  if (!kept.empty()) return kept;
  const bool same_run = j.state && j.state->phase == Phase::kRunning;
  const Why before = parse_comment_cap(j.system_comment);
  return same_run && before != Why::kSpoolFull ? before : Why();
}

void finish(RoundResult& result, const Snapshot& snap, const std::vector<JobInput>& inputs, const Params& params,
            const std::vector<Why>& kept) {
  const double end = expected_end(snap.now, params);
  for (JobDecision& d : result.decisions) {
    d.view.kind = elastic_kind(inputs[d.job], params) ? "elastic" : "moldable";
    d.view.cap = cap_of(snap, snap.jobs[d.job], inputs[d.job], params, d, kept[d.job]);
    d.view.start = requeue_start(snap.jobs[d.job], d.state, d.action, snap.now).value_or(0);
    d.comment = format_comment(d.view, d.state);
    const ElasticJobSnapshot& j = snap.jobs[d.job];
    if (j.running && j.time_limit == 0 && d.state.limit == 0 &&
        (j.end_time > end + 1 || j.end_time < end - params.interval - 1))
      d.expected_end = end;
  }
}

}  // namespace

RoundResult plan_round(const Snapshot& snap, const std::vector<JobInput>& inputs, const Params& params,
                       Policy* policy, bool arrivals_only, const TypeRatios* ratios, const RoundRules& rules) {
  RoundResult result;
  const Capacity cap = capacity(snap, inputs, params);
  result.reserved_gpus = cap.reserved;
  const Selection jobs = select_jobs(snap, inputs, params);
  const Promises promised = promises(snap, jobs.scheduled, cap.gpus);
  const std::vector<TypedJobModel> typed = type_models(snap, inputs, params, ratios, rules);
  std::vector<int> max_replicas;  // per scheduled job: the policy's cap, when its answer was used (else 0)
  const std::vector<Placement> chosen = ask_policy(snap, inputs, params, policy, arrivals_only, jobs.scheduled,
                                                   cap.gpus, promised, typed, rules, result, max_replicas);
  std::vector<int> free = cap.gpus;  // what the round leaves unused
  for (const Placement& p : chosen) add(free, p, -1);
  std::vector<Why> kept(snap.jobs.size());  // per job: why the policy kept it at its size
  for (std::size_t k = 0; k < jobs.scheduled.size(); ++k) {
    const std::size_t i = jobs.scheduled[k];
    const ElasticJobSnapshot& j = snap.jobs[i];
    if (max_replicas[k] > 0 && j.running && chosen[k] == j.current && phase_of(j) != Phase::kCheckpointing)
      kept[i] = not_grown(snap, j, inputs[i], max_replicas[k], free);
    result.decisions.push_back(decide(snap, i, inputs[i], chosen[k], params, typed_of(typed, i)));
  }
  for (std::size_t i : jobs.outside) result.decisions.push_back(decide_outside(snap, i, inputs[i], typed_of(typed, i)));
  finish(result, snap, inputs, params, kept);
  plan_power(snap, result.autoscale, result.decisions);
  paid_utility(result, snap, cap.gpus);
  return result;
}

}  // namespace pollux::sched

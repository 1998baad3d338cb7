// SPDX-License-Identifier: GPL-2.0-or-later
// The round's snapshot (see snapshot.h).
#include "snapshot.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "common/compat_gres.h"
#include "common/compat_power_save.h"
#include "common/job_record.h"
#include "common/job_runnable.h"
#include "sched/job_transitions.h"

namespace pollux::sched {
namespace {

// The node is out of service: down, drained, failing, not responding,
// not yet in the cluster, powering down or rebooting. A node powered
// down by Slurm's power saving, or booting after its resume (not
// responding until it registers), is capacity as it is to Slurm's own
// scheduling: a job placed there makes slurmctld resume it and waits for
// the boot. One powering down is not (Slurm allocates it only once it is
// down, after SuspendTimeout); one whose resume failed is DOWN.
bool out_of_service(const node_record_t* node) {
  const bool no_respond = IS_NODE_NO_RESPOND(node) && !IS_NODE_POWERING_UP(node);
  return IS_NODE_DOWN(node) || IS_NODE_DRAIN(node) || IS_NODE_FAIL(node) || no_respond || IS_NODE_FUTURE(node) ||
         IS_NODE_POWERING_DOWN(node) || IS_NODE_REBOOT_REQUESTED(node) || IS_NODE_REBOOT_ISSUED(node);
}

// Slurm's power saving: whether the node must boot before work runs there.
Power power_of(const node_record_t* node) {
  // (POWER_UP: asked to resume, e.g. by goodput auto-scaling; Slurm's power
  // saving runs its ResumeProgram within ResumeRate: paid as booting.)
  if (IS_NODE_POWERING_UP(node) || (IS_NODE_POWERED_DOWN(node) && IS_NODE_POWER_UP(node))) return Power::kBooting;
  if (IS_NODE_POWERED_DOWN(node) || IS_NODE_POWERING_DOWN(node)) return Power::kOff;
  return Power::kOn;
}

// slurmctld has not heard from the node since it started: a restarted
// slurmctld recovers only the DOWN and DRAIN states and keeps every other
// node UNKNOWN until it registers (its first ping comes 3 s after the
// start), though its jobs run on.
bool awaiting_registration(const node_record_t* node) {
  return (node->node_state & NODE_STATE_BASE) == NODE_STATE_UNKNOWN && !out_of_service(node);
}

// The job is still completing on a node that takes no work (not
// responding, or already DOWN).
bool completing_on_failed_node(const job_record_t* job) {
  if (job->node_bitmap_cg == nullptr) return false;
  node_record_t* node = nullptr;
  for (int i = 0; (node = next_node(&i)) != nullptr; ++i)
    if (bit_test(job->node_bitmap_cg, node->index) && (IS_NODE_NO_RESPOND(node) || IS_NODE_DOWN(node))) return true;
  return false;
}

// A pending rigid job that asks for GPUs and waits only for resources.
std::optional<RigidRequest> rigid_request(const job_record_t* job, double now) {
  if (!IS_JOB_PENDING(job) || job->priority == 0 || job->details == nullptr) return std::nullopt;
  if (job->state_reason != WAIT_NO_REASON && job->state_reason != WAIT_RESOURCES &&
      job->state_reason != WAIT_PRIORITY)
    return std::nullopt;
  if (job->details->begin_time > now) return std::nullopt;
  RigidRequest r;
  r.nodes = static_cast<int>(std::clamp<uint32_t>(job->details->min_nodes, 1, kMaxNodes));
  if (job->tres_per_node != nullptr) {
    if (auto g = gpus_in_tres(job->tres_per_node)) {
      r.gpus_per_node = g->gpus;
      r.gpu_type = g->type;
    }
  }
  if (r.gpus_per_node == 0 && job->tres_per_job != nullptr) {
    if (auto g = gpus_in_tres(job->tres_per_job)) {
      r.gpus = g->gpus;
      r.gpu_type = g->type;
    }
  }
  if (r.gpus_per_node == 0 && r.gpus == 0) return std::nullopt;
  return r;
}

// How the job ended, for its SystemComment's why=.
Why end_reason(const job_record_t* job) {
  switch (job->job_state & JOB_STATE_BASE) {
    case JOB_COMPLETE: return Why::kCompleted;
    case JOB_CANCELLED: return Why::kCancelled;
    case JOB_TIMEOUT: return Why::kTimeout;
    case JOB_NODE_FAIL: return Why::kNodeFail;
    case JOB_PREEMPTED: return Why::kPreempted;
    case JOB_DEADLINE: return Why::kDeadline;
    case JOB_OOM: return Why::kOutOfMemory;
    default: return Why::kFailed;
  }
}

std::string ended_comment(const job_record_t* job, JobState state) {
  end(state, end_reason(job), static_cast<double>(job->end_time));
  return format_comment(JobView{}, state);
}

// The nodes Slurm's power saving never suspends: SuspendExcNodes (24.11's
// "NODES:COUNT" keeps COUNT of them up: all are taken, the safe side), the
// nodes of SuspendExcParts, and those in a state of SuspendExcStates. A
// bitmap over Slurm's node indices (nullptr: none by name), the partition
// names and the states.
struct PowerSaveExclusions {
  bitstr_t* nodes = nullptr;
  std::set<std::string> parts;
  const SuspendExcStates states = suspend_exc_states();
  const std::vector<std::uint32_t> reserved = reservation_flags(states.flags, std::time(nullptr));
  PowerSaveExclusions() {
    if (slurm_conf.suspend_exc_nodes != nullptr) {
      std::string names = slurm_conf.suspend_exc_nodes, plain;
      for (std::size_t at = 0; at <= names.size();) {  // drop each ":COUNT"
        const std::size_t comma = std::min(names.find(',', at), names.size());
        const std::string tok = names.substr(at, comma - at);
        plain += (plain.empty() ? "" : ",") + tok.substr(0, tok.find(':'));
        at = comma + 1;
      }
      if (!plain.empty()) nodes = node_bitmap_of(plain.data());
    }
    if (slurm_conf.suspend_exc_parts != nullptr) {
      const std::string list = slurm_conf.suspend_exc_parts;
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) parts.insert(list.substr(at, comma - at));
        at = comma + 1;
      }
    }
  }
  ~PowerSaveExclusions() { FREE_NULL_BITMAP(nodes); }
  PowerSaveExclusions(const PowerSaveExclusions&) = delete;
  PowerSaveExclusions& operator=(const PowerSaveExclusions&) = delete;

  bool excluded(const node_record_t* node) const {
    const auto at = static_cast<std::size_t>(node->index);
    const std::uint32_t resv = at < reserved.size() ? reserved[at] : 0;
    if (states.excludes(node, resv)) return true;
    if (nodes != nullptr && node->index < bit_size(nodes) && bit_test(nodes, node->index)) return true;
    for (int k = 0; k < node->part_cnt && !parts.empty(); ++k) {
      const auto* part = static_cast<const part_record_t*>(node->part_pptr[k]);
      if (part != nullptr && part->name != nullptr && parts.count(part->name) > 0) return true;
    }
    return false;
  }
};

}  // namespace

Snapshot take_snapshot(double now) {
  Snapshot snap;
  snap.now = now;
  std::vector<int> index(static_cast<std::size_t>(std::max(node_record_count, 0)), -1);
  std::vector<std::size_t> node_of;  // snapshot node -> Slurm's node index
  std::vector<std::string> node_types;
  const PowerSaveExclusions exclusions;
  node_record_t* node = nullptr;
  for (int i = 0; (node = next_node(&i)) != nullptr; ++i) {
    const NodeGpus gpus = node_gpus(node);
    if (gpus.count <= 0 || node->index >= index.size()) continue;
    index[node->index] = static_cast<int>(snap.nodes.size());
    const bool awaiting = awaiting_registration(node);
    NodeSnapshot& n = snap.nodes.emplace_back();
    n.name = node->name;
    n.gpus = gpus.count;
    n.usable = !awaiting && !out_of_service(node);
    n.awaiting_registration = awaiting;
    n.power = power_of(node);
    n.power_save_excluded = exclusions.excluded(node);
    n.boot_requested = static_cast<double>(node->boot_req_time);
    n.slurmd_started = static_cast<double>(node->slurmd_start_time);
    n.last_response = static_cast<double>(node->last_response);
    node_of.push_back(node->index);
    node_types.push_back(gpus.type);
  }
  GpuTypes types = group_gpu_types(node_types);
  for (std::size_t n = 0; n < snap.nodes.size(); ++n) snap.nodes[n].type = types.of_node[n];
  snap.gpu_types = std::move(types.names);
  auto placement_of = [&](const job_record_t* job) {
    Placement p;
    for_each_gpu_share(job, [&](int n, int gpus) {
      if (n >= 0 && static_cast<std::size_t>(n) < index.size() && index[n] >= 0) p.push_back({index[n], gpus});
    });
    return normalize_placement(std::move(p));
  };

  std::vector<std::pair<uint32_t, RigidRequest>> queue;  // (priority, request)
  ListIteratorGuard it(job_list);
  while (auto* job = it.next<job_record_t>()) {
    const bool pending = IS_JOB_PENDING(job), running = IS_JOB_RUNNING(job);
    std::string problem;  // a word in its SystemComment this version does not know
    std::optional<JobState> state = pollux_state(job, &problem);
    const bool fresh = !state && new_elastic_job(job);
    // Suspended (scontrol suspend): Slurm keeps its GPUs; the round leaves
    // them and the job alone, and says so (state=suspended).
    const bool suspended = state && IS_JOB_SUSPENDED(job);
    if ((state || fresh) && (pending || running || suspended)) {
      ElasticJobSnapshot e;
      e.job_id = job->job_id;
      if (!problem.empty()) snap.comment_problems.push_back("JobId=" + std::to_string(job->job_id) + ": " + problem);
      e.uid = job->user_id;
      e.partition = job->partition != nullptr ? job->partition : "";
      e.submit_time = state && state->submit > 0 ? state->submit
                      : job->details != nullptr ? static_cast<double>(job->details->submit_time)
                                                : now;
      e.start_time = static_cast<double>(job->start_time);
      e.restarts = job->restart_cnt;
      e.running = running;
      e.suspended = suspended;
      e.held_by_pollux = held_by_pollux(job);
      // Running too: held while it runs. Slurm sets a job it suspends
      // (scontrol suspend) to priority 0 itself, against a gang resume:
      // no one's hold.
      e.held_by_other = job->priority == 0 && !e.held_by_pollux && !suspended;
      e.range = state ? state->range : *classify(shape_of(job));
      if (running || suspended) e.current = placement_of(job);
      if (state) e.decided = to_placement(state->alloc, snap.nodes);
      e.state = std::move(state);
      e.system_comment = job->system_comment != nullptr ? job->system_comment : "";
      e.begin_time = job->details != nullptr ? static_cast<double>(job->details->begin_time) : 0.0;
      e.completing = IS_JOB_COMPLETING(job);
      if (pending && !e.held_by_other) e.blocker = start_blocker(job);
      // Requeued, and still completing on a node that stopped answering:
      // Slurm starts it only once that node is DOWN (SlurmdTimeout), so
      // GPUs promised to it meanwhile would only sit idle.
      if (pending && e.completing && e.blocker.empty() && completing_on_failed_node(job)) e.blocker = Why::kNodeFailed;
      // Slurm's main loop found the size sched/pollux set impossible
      // (Reason=BadConstraints): no GPUs until the next periodic round
      // decides again, rather than a release every second, and that size
      // is not proposed again (refused_now).
      if (pending && state && job->state_reason == FAIL_BAD_CONSTRAINTS) {
        if (e.blocker.empty()) e.blocker = Why::kRefused;
        if (!state->alloc.empty()) e.refused_now = Size{state->alloc.nodes, state->alloc.gpus_per_node};
      }
      e.limits_key = limits_key(job);
      // A year or more is Slurm's stand-in for no limit (elastic jobs get one
      // from their resizes), not a limit.
      if (job->time_limit != INFINITE && job->time_limit != NO_VAL && job->time_limit < YEAR_MINUTES)
        e.time_limit = job->time_limit;
      e.end_time = static_cast<double>(job->end_time);
      JobBounds bounds = job_bounds(job, e.range.min_nodes, e.range.max_nodes, e.range.gpus_per_node,
                                    static_cast<time_t>(now));
      e.min_nodes_limit = bounds.min_nodes;
      e.max_nodes_limit = bounds.max_nodes;
      e.max_gpus_per_node_limit = bounds.max_gpus_per_node;
      e.max_gpus_limit = bounds.max_gpus;
      e.no_size = std::move(bounds.no_size);
      const std::vector<bool>& usable = bounds.usable;
      e.allowed.assign(snap.nodes.size(), false);
      for (std::size_t n = 0; n < snap.nodes.size(); ++n)
        e.allowed[n] = node_of[n] < usable.size() && usable[node_of[n]];
      if (std::find(e.allowed.begin(), e.allowed.end(), false) == e.allowed.end()) e.allowed.clear();
      if (pending && job->state_reason == WAIT_HELD && job->state_desc != nullptr) e.hold_text = job->state_desc;
      e.requeue_unfinished = requeue_unfinished(job);
      snap.jobs.push_back(std::move(e));
      continue;  // GPUs of a requeued elastic job still completing are about to be free
    }
    if (state && IS_JOB_FINISHED(job)) {  // an elastic job that ended: likewise
      const bool held = state->phase == Phase::kRunning || state->phase == Phase::kCheckpointing ||
                        state->phase == Phase::kSuspended;
      if (state->phase != Phase::kEnded)
        snap.ended.push_back({job->job_id, ended_comment(job, *state), held ? state->alloc.gpus() : 0});
      continue;
    }
    if (IS_JOB_RUNNING(job) || IS_JOB_SUSPENDED(job) || IS_JOB_COMPLETING(job)) {
      for_each_gpu_share(job, [&](int n, int gpus) {
        if (n >= 0 && static_cast<std::size_t>(n) < index.size() && index[n] >= 0)
          snap.nodes[static_cast<std::size_t>(index[n])].rigid_gpus += gpus;
      });
    } else if (!state) {
      if (auto r = rigid_request(job, now)) queue.emplace_back(job->priority, *r);
    }
  }
  std::stable_sort(queue.begin(), queue.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& q : queue) snap.rigid_queue.push_back(q.second);
  return snap;
}

}  // namespace pollux::sched

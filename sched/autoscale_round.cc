// SPDX-License-Identifier: GPL-2.0-or-later
// Goodput auto-scaling in the periodic round (see autoscale_round.h).
#include "autoscale_round.h"

#include <algorithm>
#include <cstdio>

#include "pollux/autoscale.h"

namespace pollux::sched {
namespace {

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string plural(int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

// Why the target is what it is, for the log.
std::string why_text(const AutoscalePlan& p, bool no_jobs, const UtilityBand& band) {
  const std::string worth = plural(p.target, "node") + " worth running of " + std::to_string(p.paid) + " on";
  if (no_jobs) return "no elastic job to size: " + worth;
  std::string where = p.utility < band.min   ? "below " + fixed2(band.min)
                      : p.utility > band.max ? "above " + fixed2(band.max)
                                             : "within " + fixed2(band.min) + ":" + fixed2(band.max);
  return "utility " + fixed2(p.utility) + " " + where + ": " + worth;
}

}  // namespace

AutoscalePlan plan_autoscale(const Snapshot& snap, const Params& params, const std::vector<JobInfo>& jobs,
                             const std::vector<Placement>& current, const std::vector<int>& cap) {
  AutoscalePlan p;
  const std::size_t count = snap.nodes.size();
  p.usable.assign(count, true);
  if (params.autoscale != AutoscaleMode::kGoodput) return p;
  p.active = true;
  std::vector<int> in_use(count, 0);  // GPUs held per node: by others, and by the jobs where they are
  // A node wholly held by others (rigid jobs, GPUs kept for the rigid
  // queue: none left to the policy) stays on, and is none of the nodes the
  // band sizes: the target is in nodes for the jobs the policy sizes.
  auto policy_gpus = [&](std::size_t n) { return n < cap.size() ? cap[n] : 0; };
  auto wholly_held = [&](std::size_t n) { return snap.nodes[n].gpus > 0 && policy_gpus(n) <= 0; };
  int may_run = 0, paid_gpus = 0;
  for (std::size_t n = 0; n < count; ++n) {
    const NodeSnapshot& node = snap.nodes[n];
    in_use[n] = std::max(0, node.gpus - policy_gpus(n));
    if (!node.usable || wholly_held(n)) continue;
    ++may_run;
    p.gpus_per_node = std::max(p.gpus_per_node, node.gpus);
    if (node.power != Power::kOff) {
      ++p.paid;
      paid_gpus += node.gpus;
    }
  }
  for (const Placement& pl : current)
    for (const NodeShare& s : pl)
      if (static_cast<std::size_t>(s.node) < count) in_use[static_cast<std::size_t>(s.node)] += s.gpus;
  p.utility = cluster_utility(jobs, current, paid_gpus);
  const AutoscaleTarget target = autoscale_target(jobs, current, p.paid, may_run, p.gpus_per_node, params.utility_band);
  const int floor = target.floor;
  p.target = target.nodes;
  p.why = why_text(p, jobs.empty(), params.utility_band);
  if (p.target > target.band)
    p.why += " (" + std::to_string(target.band) + " by the band; the running jobs' minimums need more)";

  // Nodes held by others stay (those partly held count in the target);
  // then on, booting, off; the busiest first.
  auto rank = [&](std::size_t n) { return snap.nodes[n].power == Power::kOn ? 0 : snap.nodes[n].power == Power::kBooting ? 1 : 2; };
  std::vector<std::size_t> order;
  int kept = 0;
  for (std::size_t n = 0; n < count; ++n) {
    if (!snap.nodes[n].usable || wholly_held(n)) continue;  // takes no new work from the policy anyway
    // (A node Slurm's power saving excludes stays on whatever the target:
    // used as one held.)
    const bool held = snap.nodes[n].gpus - policy_gpus(n) > 0 || snap.nodes[n].power_save_excluded;
    if (held) ++kept;
    else order.push_back(n);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : in_use[a] > in_use[b];
  });
  // The running jobs' floor counts in nodes the policy has whole: a node
  // partly held by others may have too few GPUs left for them.
  int whole = 0;
  for (std::size_t n : order) {
    if (kept < p.target || whole < floor) {
      ++kept;
      ++whole;
    } else {
      p.usable[n] = false;
    }
  }
  return p;
}

namespace {

// Per snapshot node: whether an elastic job runs, was promised or is placed
// there by this round's decisions.
std::vector<bool> busy_nodes(const Snapshot& snap, const std::vector<JobDecision>& decisions) {
  std::vector<bool> busy(snap.nodes.size(), false);
  auto mark = [&](const Placement& p) {
    for (const NodeShare& s : p)
      if (static_cast<std::size_t>(s.node) < busy.size()) busy[static_cast<std::size_t>(s.node)] = true;
  };
  for (const ElasticJobSnapshot& j : snap.jobs) {
    mark(j.current);
    mark(j.decided);
  }
  for (const JobDecision& d : decisions) mark(to_placement(d.state.alloc, snap.nodes));
  return busy;
}

}  // namespace

void plan_power(const Snapshot& snap, AutoscalePlan& plan, const std::vector<JobDecision>& decisions) {
  plan.power_down.clear();
  plan.power_up.clear();
  if (!plan.active || plan.places_only) return;
  const std::vector<bool> busy = busy_nodes(snap, decisions);
  for (std::size_t n = 0; n < snap.nodes.size() && n < plan.usable.size(); ++n) {
    const NodeSnapshot& node = snap.nodes[n];
    if (!node.usable || node.awaiting_registration || busy[n]) continue;
    if (!plan.usable[n] && node.power == Power::kOn && !node.power_save_excluded && node.rigid_gpus == 0)
      plan.power_down.push_back(n);
    else if (plan.usable[n] && node.power == Power::kOff)
      plan.power_up.push_back(n);
  }
}

}  // namespace pollux::sched

// Cloud auto-scaling for pollux-sim (--autoscale): which nodes are paid for
// and usable. What decides it is Slurm's power saving (kQueue, kGoodput)
// and, for kGoodput, sched/pollux's round (the plan it returns).
//
// A node is down (not paid), booting (paid, not usable until `boot_delay`
// seconds after it was started) or up (paid, usable). Modes:
// - kFixed: every node up from the start (the largest cluster, always paid).
// - kQueue: Slurm's power saving as cloud Slurm runs it today: every node is
//   capacity to the scheduler; a job placed on a down node resumes it and
//   waits for it to boot; a node idle for `suspend_time` goes down.
// - kGoodput: Pollux's auto-scaling as sched/pollux does it
//   (pollux_autoscale=goodput, sched/autoscale_round.h, on Slurm's power
//   saving): each round sizes the cluster to keep its utility in a band,
//   powers down the idle nodes beyond it and resumes those within it.
#ifndef POLLUX_SIM_AUTOSCALER_H
#define POLLUX_SIM_AUTOSCALER_H

#include <optional>
#include <string>
#include <vector>

#include "pollux/autoscale.h"
#include "pollux/policy.h"
#include "sched/round.h"

namespace pollux::sim {

enum class ScaleMode { kOff, kFixed, kQueue, kGoodput };

struct AutoscaleOptions {
  ScaleMode mode = ScaleMode::kOff;
  double boot_delay = 120;    ///< seconds from a node's start to its use
  double node_price = 1.0;    ///< per node-hour (cost = node-hours x price)
  double suspend_time = 300;  ///< kQueue: idle seconds before a node goes down (Slurm's SuspendTime)
  UtilityBand band;           ///< kGoodput: libgoodput's rule (pollux/autoscale.h)
};

/// "fixed", "queue", "goodput" (and "off"); nullopt for anything else.
std::optional<ScaleMode> parse_scale_mode(const std::string& name);
const char* scale_mode_name(ScaleMode mode);

/// The nodes' power states and what they cost.
class NodePool {
 public:
  /// kFixed: all `nodes` up at time 0; the other modes: all down.
  NodePool(int nodes, const AutoscaleOptions& options);

  int size() const noexcept { return static_cast<int>(ready_at_.size()); }
  /// Paid for: booting or up.
  bool on(int node) const { return on_[static_cast<std::size_t>(node)]; }
  /// Usable at `now`: on and booted.
  bool up(int node, double now) const { return on(node) && ready_at_[static_cast<std::size_t>(node)] <= now; }
  /// Seconds from `now` until every node of `p` is up (0: all up).
  double wait(const Placement& p, double now) const;
  /// As sched/pollux sees the node at `now` (sched::NodeSnapshot::power):
  /// up, booting, or powered down.
  sched::Power power(int node, double now) const;
  int on_count() const;
  int up_count(double now) const;

  /// Starts `node` (down -> booting, usable at now + boot_delay); no-op if on.
  void boot(int node, double now);
  void power_down(int node);
  /// Pays for the nodes on during [now, now + seconds).
  void pay(double seconds);
  double node_hours() const noexcept { return node_seconds_ / 3600.0; }

  /// kQueue, after a round's allocation (`used`: GPUs held per node): boots
  /// the down nodes the allocation uses, powers down the nodes idle for
  /// suspend_time (an unused node's idle time starts when it is up).
  void follow_allocation(const std::vector<int>& used, double now);
  /// kGoodput under sched/pollux's round: powers down and resumes the
  /// nodes the round's plan names (SimRoundPlan::power_down, power_up).
  void apply(const std::vector<std::size_t>& down, const std::vector<std::size_t>& up, double now);

 private:
  AutoscaleOptions options_;
  std::vector<char> on_;
  std::vector<double> ready_at_;
  std::vector<double> idle_since_;
  double node_seconds_ = 0;
};

}  // namespace pollux::sim

#endif  // POLLUX_SIM_AUTOSCALER_H

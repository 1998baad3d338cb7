// Cloud auto-scaling for pollux-sim (see autoscaler.h).
#include "autoscaler.h"

#include <algorithm>

namespace pollux::sim {

std::optional<ScaleMode> parse_scale_mode(const std::string& name) {
  if (name == "off") return ScaleMode::kOff;
  if (name == "fixed") return ScaleMode::kFixed;
  if (name == "queue") return ScaleMode::kQueue;
  if (name == "goodput") return ScaleMode::kGoodput;
  return std::nullopt;
}

const char* scale_mode_name(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::kFixed: return "fixed";
    case ScaleMode::kQueue: return "queue";
    case ScaleMode::kGoodput: return "goodput";
    case ScaleMode::kOff: break;
  }
  return "off";
}

NodePool::NodePool(int nodes, const AutoscaleOptions& options)
    : options_(options),
      on_(static_cast<std::size_t>(nodes), options.mode == ScaleMode::kFixed),
      ready_at_(static_cast<std::size_t>(nodes), 0.0),
      idle_since_(static_cast<std::size_t>(nodes), 0.0) {}

double NodePool::wait(const Placement& p, double now) const {
  double wait = 0;
  for (const NodeShare& s : p) {
    const std::size_t n = static_cast<std::size_t>(s.node);
    wait = std::max(wait, on_[n] ? ready_at_[n] - now : options_.boot_delay);
  }
  return std::max(0.0, wait);
}

sched::Power NodePool::power(int node, double now) const {
  if (!on(node)) return sched::Power::kOff;
  return up(node, now) ? sched::Power::kOn : sched::Power::kBooting;
}

int NodePool::on_count() const { return static_cast<int>(std::count(on_.begin(), on_.end(), 1)); }

int NodePool::up_count(double now) const {
  int n = 0;
  for (int k = 0; k < size(); ++k) n += up(k, now);
  return n;
}

void NodePool::boot(int node, double now) {
  const std::size_t n = static_cast<std::size_t>(node);
  if (on_[n]) return;
  on_[n] = 1;
  ready_at_[n] = now + options_.boot_delay;
  idle_since_[n] = ready_at_[n];
}

void NodePool::power_down(int node) { on_[static_cast<std::size_t>(node)] = 0; }

void NodePool::pay(double seconds) { node_seconds_ += on_count() * seconds; }

void NodePool::follow_allocation(const std::vector<int>& used, double now) {
  for (int k = 0; k < size(); ++k) {
    const std::size_t n = static_cast<std::size_t>(k);
    if (used[n] > 0) {
      boot(k, now);
      idle_since_[n] = std::max(now, ready_at_[n]);
    } else if (up(k, now) && now - idle_since_[n] >= options_.suspend_time) {
      power_down(k);
    }
  }
}

void NodePool::apply(const std::vector<std::size_t>& down, const std::vector<std::size_t>& up, double now) {
  for (std::size_t n : down) power_down(static_cast<int>(n));
  for (std::size_t n : up) boot(static_cast<int>(n), now);
}

}  // namespace pollux::sim

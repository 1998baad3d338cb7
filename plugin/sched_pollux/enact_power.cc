// SPDX-License-Identifier: GPL-2.0-or-later
// Goodput auto-scaling's actions on nodes (see enact_power.h).
#include "enact_power.h"

#include <cstdint>
#include <ctime>
#include <vector>

#include "common/compat_power_save.h"
#include "common/slurm_api.h"

namespace pollux::sched {

PowerReport enact_power(const Snapshot& snap, const RoundResult& round) {
  PowerReport r;
  const SuspendExcStates states = suspend_exc_states();
  const std::vector<std::uint32_t> reserved =
      round.autoscale.power_down.empty() ? std::vector<std::uint32_t>{} : reservation_flags(states.flags, std::time(nullptr));
  for (std::size_t n : round.autoscale.power_down) {
    const std::string& name = snap.nodes[n].name;
    node_record_t* node = find_node_record(const_cast<char*>(name.c_str()));
    // Busy, powering or in a state SuspendExcStates keeps on (a reservation
    // begun) since the snapshot: Slurm's own state wins.
    if (node == nullptr || !IS_NODE_IDLE(node) || IS_NODE_COMPLETING(node) || IS_NODE_POWERED_DOWN(node) ||
        IS_NODE_POWERING_DOWN(node) || IS_NODE_POWERING_UP(node) || IS_NODE_POWER_DOWN(node))
      continue;
    const auto at = static_cast<std::size_t>(node->index);
    if (states.excludes(node, at < reserved.size() ? reserved[at] : 0)) continue;
    const std::string reason = "sched/pollux: " + round.autoscale.why;
    update_node_msg_t msg;
    slurm_init_update_node_msg(&msg);
    msg.node_names = const_cast<char*>(name.c_str());
    msg.node_state = NODE_STATE_POWER_DOWN | NODE_STATE_POWER_DRAIN;  // POWER_DOWN_ASAP
    msg.reason = const_cast<char*>(reason.c_str());
    const int rc = update_node(&msg, slurm_conf.slurm_user_id);
    if (rc != SLURM_SUCCESS) {
      r.errors.push_back("power down " + name + " refused by slurmctld: " + slurm_strerror(rc) +
                         " (e.g. because its power saving is off: no SuspendProgram or ResumeProgram)");
      continue;
    }
    ++r.powered_down;
    r.lines.push_back("power down " + name + " (" + round.autoscale.why + ")");
  }
  for (std::size_t n : round.autoscale.power_up) {
    const std::string& name = snap.nodes[n].name;
    node_record_t* node = find_node_record(const_cast<char*>(name.c_str()));
    // Resumed, allocated or going down since the snapshot: Slurm's own state wins.
    if (node == nullptr || !IS_NODE_POWERED_DOWN(node) || IS_NODE_POWERING_UP(node) || IS_NODE_POWER_UP(node) ||
        IS_NODE_POWERING_DOWN(node) || !IS_NODE_IDLE(node))
      continue;
    update_node_msg_t msg;
    slurm_init_update_node_msg(&msg);
    msg.node_names = const_cast<char*>(name.c_str());
    msg.node_state = NODE_STATE_POWER_UP;  // what `scontrol power up` asks: ResumeProgram runs
    const int rc = update_node(&msg, slurm_conf.slurm_user_id);
    if (rc != SLURM_SUCCESS) {
      r.errors.push_back("power up " + name + " refused by slurmctld: " + slurm_strerror(rc));
      continue;
    }
    ++r.powered_up;
    r.lines.push_back("power up " + name + " ahead of need (" + round.autoscale.why + ")");
  }
  return r;
}

}  // namespace pollux::sched

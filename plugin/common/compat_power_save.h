// SPDX-License-Identifier: GPL-2.0-or-later
// Power saving's settings on every supported Slurm: node expressions
// (e.g. SuspendExcNodes) to a node bitmap (node_name2bitmap gained an
// argument for the names it could not resolve: checked on 22.05, without
// it, and 24.11, with it), and SuspendExcStates (from 23.02; 22.05 has no
// such setting).
#ifndef POLLUX_COMPAT_POWER_SAVE_H
#define POLLUX_COMPAT_POWER_SAVE_H

#include <algorithm>
#include <cstdint>
#include <string>

#include "slurm_api.h"

namespace pollux::sched {

/// The nodes `names` (a Slurm node expression) names, unknown names
/// ignored; nullptr when none. The caller frees it (FREE_NULL_BITMAP).
inline bitstr_t* node_bitmap_of(char* names) {
  bitstr_t* bitmap = nullptr;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
  node_name2bitmap(names, true, &bitmap, nullptr);
#else
  node_name2bitmap(names, true, &bitmap);
#endif
  return bitmap;
}

/// SuspendExcStates: the node states Slurm's power saving never powers
/// down, read as its power_save.c reads them: DOWN (its base state; any
/// prefix of two letters or more) and the state flags it accepts there
/// (others it refuses with an error of its own, and so are left out).
struct SuspendExcStates {
  bool down = false;
  std::uint32_t flags = 0;
  bool excludes(const node_record_t* node) const {
    return (down && IS_NODE_DOWN(node)) || (flags & node->node_state) != 0;
  }
};

inline SuspendExcStates suspend_exc_states() {
  SuspendExcStates out;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
  if (slurm_conf.suspend_exc_states == nullptr) return out;
  constexpr std::uint32_t kExcludable = NODE_STATE_CLOUD | NODE_STATE_DRAIN | NODE_STATE_DYNAMIC_FUTURE |
                                        NODE_STATE_DYNAMIC_NORM | NODE_STATE_FAIL | NODE_STATE_INVALID_REG |
                                        NODE_STATE_MAINT | NODE_STATE_NO_RESPOND | NODE_STATE_PLANNED |
                                        NODE_STATE_RES;
  const std::string list = slurm_conf.suspend_exc_states;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    std::string tok = list.substr(at, comma - at);
    at = comma + 1;
    if (tok.empty()) continue;
    if (tok.size() >= 2 && xstrncasecmp(tok.c_str(), "DOWN", tok.size()) == 0) {
      out.down = true;
      continue;
    }
    out.flags |= parse_node_state_flag(tok.data()) & kExcludable;
  }
#endif
  return out;
}

}  // namespace pollux::sched

#endif  // POLLUX_COMPAT_POWER_SAVE_H

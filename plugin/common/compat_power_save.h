// SPDX-License-Identifier: GPL-2.0-or-later
// Power saving's settings on every supported Slurm: node expressions
// (e.g. SuspendExcNodes) to a node bitmap (node_name2bitmap gained an
// argument for the names it could not resolve: checked on 22.05, without
// it, and 24.11, with it), and SuspendExcStates (from 23.02; 22.05 has no
// such setting), with the flags reservations give nodes.
#ifndef POLLUX_COMPAT_POWER_SAVE_H
#define POLLUX_COMPAT_POWER_SAVE_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

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
/// A node in a reservation that has started counts as RESERVED (and, in a
/// MAINT one, MAINT) at once: Slurm sets those flags in its background loop
/// (set_node_maint_mode(), every 5 s; creating a reservation does not), and
/// sched/pollux may power a node down within those seconds, where Slurm's
/// power saving waits SuspendTime.
struct SuspendExcStates {
  bool down = false;
  std::uint32_t flags = 0;
  bool excludes(const node_record_t* node, std::uint32_t reservation_flags = 0) const {
    return (down && IS_NODE_DOWN(node)) || (flags & (node->node_state | reservation_flags)) != 0;
  }
};

/// The state flags the reservations active at `now` give each node, by
/// Slurm's node index, as set_node_maint_mode() sets them (NODE_STATE_RES;
/// NODE_STATE_MAINT too for a MAINT reservation); empty when `wanted`
/// (the SuspendExcStates flags) names neither. Caller holds the node read
/// lock (reservations change under the node write lock).
inline std::vector<std::uint32_t> reservation_flags(std::uint32_t wanted, time_t now) {
  std::vector<std::uint32_t> out;
  if ((wanted & (NODE_STATE_RES | NODE_STATE_MAINT)) == 0 || resv_list == nullptr || node_record_count <= 0) return out;
  out.assign(static_cast<std::size_t>(node_record_count), 0);
  auto* it = list_iterator_create(resv_list);
  while (auto* resv = static_cast<slurmctld_resv_t*>(list_next(it))) {
    if (resv->node_bitmap == nullptr || now < resv->start_time || now >= resv->end_time) continue;
    const std::uint32_t f = NODE_STATE_RES | ((resv->flags & RESERVE_FLAG_MAINT) ? NODE_STATE_MAINT : 0);
    const auto bits = std::min<std::size_t>(out.size(), static_cast<std::size_t>(bit_size(resv->node_bitmap)));
    for (std::size_t i = 0; i < bits; ++i)
      if (bit_test(resv->node_bitmap, static_cast<bitoff_t>(i))) out[i] |= f;
  }
  list_iterator_destroy(it);
  return out;
}

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

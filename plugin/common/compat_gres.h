// SPDX-License-Identifier: GPL-2.0-or-later
// A node's GPUs, and their GRES types, from Slurm's own gres records: the
// gres_node_state_t of gres/gpu in the node's gres_list (gres_cnt_avail;
// type_cnt, type_name[] and type_cnt_avail[] when the node's Gres= or
// gres.conf names types, e.g. Gres=gpu:a100:4). The fields are the same in
// 22.05 (src/common/gres.h) and 24.11 (src/interfaces/gres.h, which
// slurm_api.h includes from 23.02 on); a release that changes them is
// handled here, nowhere else.
#ifndef POLLUX_COMPAT_GRES_H
#define POLLUX_COMPAT_GRES_H

#include <algorithm>
#include <cstdint>
#include <string>

#include "slurm_raii.h"
#include "slurm_api.h"

namespace pollux::sched {

/// A node's GPUs and the one GRES type they have: "" when they are
/// untyped, and for a node with GPUs of several types (or typed and
/// untyped ones) the '+'-joined type names in Slurm's order (e.g.
/// "a100+v100"), a group of its own: sched/pollux never splits a node.
struct NodeGpus {
  int count = 0;
  std::string type;
};

inline NodeGpus node_gpus(const node_record_t* node) {
  NodeGpus out;
  if (node->gres_list == nullptr) return out;
  std::uint64_t gpus = 0, typed = 0;
  std::string types;
  int type_count = 0;
  ListIteratorGuard it(node->gres_list);
  while (auto* state = it.next<gres_state_t>()) {
    if (state->gres_name == nullptr || xstrcmp(state->gres_name, "gpu") != 0 || state->gres_data == nullptr) continue;
    const auto* ns = static_cast<const gres_node_state_t*>(state->gres_data);
    gpus += ns->gres_cnt_avail;
    for (int t = 0; t < ns->type_cnt && ns->type_name != nullptr; ++t) {
      if (ns->type_name[t] == nullptr || ns->type_cnt_avail == nullptr || ns->type_cnt_avail[t] == 0) continue;
      typed += ns->type_cnt_avail[t];
      types += (types.empty() ? "" : "+") + std::string(ns->type_name[t]);
      ++type_count;
    }
  }
  out.count = static_cast<int>(std::min<std::uint64_t>(gpus, 1u << 20));
  // Typed and untyped GPUs on one node: a mixed group too.
  if (type_count > 0 && typed < gpus) types += "+";
  out.type = types;
  return out;
}

}  // namespace pollux::sched

#endif  // POLLUX_COMPAT_GRES_H

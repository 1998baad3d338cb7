// SPDX-License-Identifier: GPL-2.0-or-later
// When a job's end freed GPUs (see freed_gpus.h).
#include "freed_gpus.h"

#include <algorithm>

namespace pollux::sched {

int rigid_gpus_held(const Snapshot& snapshot) {
  int held = 0;
  for (const NodeSnapshot& n : snapshot.nodes) held += n.rigid_gpus;
  return held;
}

bool FreedGpus::seen(const Snapshot& snapshot) {
  std::vector<std::uint32_t> ended;
  bool freed = false;
  for (const EndedJob& e : snapshot.ended) {
    ended.push_back(e.job_id);
    if (e.gpus > 0 && !std::binary_search(ended_.begin(), ended_.end(), e.job_id)) freed = true;
  }
  std::sort(ended.begin(), ended.end());
  ended_ = std::move(ended);
  const int held = rigid_gpus_held(snapshot);
  if (rigid_held_ >= 0 && held < rigid_held_) freed = true;
  rigid_held_ = held;
  return freed;
}

}  // namespace pollux::sched

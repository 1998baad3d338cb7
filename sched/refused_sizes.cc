// SPDX-License-Identifier: GPL-2.0-or-later
// Sizes Slurm refused (see refused_sizes.h).
#include "refused_sizes.h"

#include <algorithm>

namespace pollux::sched {
namespace {

// What a job's refused sizes hold for: its limits_key and range.
std::string refusal_key(const ElasticJobSnapshot& j) { return j.limits_key + "|" + format_range(j.range); }

template <typename Map>
void forget_ended(const Snapshot& snap, Map& map) {
  for (auto it = map.begin(); it != map.end();) {
    const bool known = std::any_of(snap.jobs.begin(), snap.jobs.end(),
                                   [&](const ElasticJobSnapshot& j) { return j.job_id == it->first; });
    it = known ? std::next(it) : map.erase(it);
  }
}

}  // namespace

bool RefusedSizes::remember(const ElasticJobSnapshot& j, const Size& size) {
  Refused& r = refused_.try_emplace(j.job_id, Refused{refusal_key(j), {}, {}}).first->second;
  if (std::find(r.sizes.begin(), r.sizes.end(), size) != r.sizes.end()) return false;
  r.sizes.push_back(size);
  return true;
}

std::vector<std::string> RefusedSizes::apply(Snapshot& snap) {
  std::vector<std::string> lines;
  for (ElasticJobSnapshot& j : snap.jobs) {
    auto it = refused_.find(j.job_id);
    if (it != refused_.end() && it->second.key != refusal_key(j)) refused_.erase(it);
    if (j.refused_now && remember(j, *j.refused_now))
      lines.push_back("JobId=" + std::to_string(j.job_id) + ": Slurm found " + std::to_string(j.refused_now->nodes) +
                      "x" + std::to_string(j.refused_now->gpus_per_node) +
                      " GPUs impossible (BadConstraints); never given this size again until its partition, limits "
                      "or range change");
    it = refused_.find(j.job_id);
    if (it != refused_.end()) j.refused = it->second.sizes;
    std::string& logged = no_size_logged_[j.job_id];
    if (!j.no_size.empty() && logged != j.no_size)
      lines.push_back("JobId=" + std::to_string(j.job_id) + ": Slurm allows it no size of its range " +
                      format_range(j.range) + " (" + j.no_size +
                      "): no GPUs until its partition, limits or range change");
    logged = j.no_size;
  }
  forget_ended(snap, refused_);
  forget_ended(snap, no_size_logged_);
  return lines;
}

std::string RefusedSizes::refused(const ElasticJobSnapshot& j, const Size& size, const std::string& reason,
                                  const std::string& message) {
  remember(j, size);
  std::string& logged = refused_.at(j.job_id).logged;
  const bool say = logged != reason;
  logged = reason;
  return say ? message : std::string();
}

}  // namespace pollux::sched

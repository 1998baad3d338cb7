// Per-configuration profile of step times (see profile_table.h).
#include "profile_table.h"

#include <algorithm>

namespace pollux::agent_detail {

ProfileSample ProfileEntry::sample() const {
  ProfileSample s;
  s.nodes = nodes;
  s.replicas = replicas;
  s.atomic_batch = atomic_batch;
  s.grad_time = micro_steps > 0 ? grad_time_sum / static_cast<double>(micro_steps) : 0;
  s.step_time = steps > 0 ? step_time_sum / static_cast<double>(steps) : 0;
  return s;
}

bool ProfileTable::add(int nodes, int replicas, int atomic, double grad_time_mean, long long micro_steps,
                       double step_time, long long mature_steps) {
  if (!(grad_time_mean > 0) || !(step_time > 0) || micro_steps < 1) return false;
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const ProfileEntry& e) {
    return e.nodes == nodes && e.replicas == replicas && e.atomic_batch == atomic;
  });
  if (it == entries_.end()) {
    if (capacity_ == 0) return false;
    if (entries_.size() >= capacity_) {
      entries_.erase(std::min_element(entries_.begin(), entries_.end(),
                                      [](const ProfileEntry& a, const ProfileEntry& b) { return a.steps < b.steps; }));
    }
    entries_.push_back(ProfileEntry{nodes, replicas, atomic, 0, 0, 0, 0});
    it = entries_.end() - 1;
  }
  it->steps += 1;
  it->micro_steps += micro_steps;
  it->grad_time_sum += grad_time_mean * static_cast<double>(micro_steps);
  it->step_time_sum += step_time;
  return it->steps == mature_steps;
}

std::vector<ProfileSample> ProfileTable::samples() const {
  std::vector<ProfileSample> out;
  out.reserve(entries_.size());
  for (const ProfileEntry& e : entries_)
    if (e.steps > 0 && e.micro_steps > 0) out.push_back(e.sample());
  return out;
}

int ProfileTable::max_replicas() const noexcept {
  int r = 0;
  for (const ProfileEntry& e : entries_) r = std::max(r, e.replicas);
  return r;
}

void ProfileTable::assign(std::vector<ProfileEntry> entries) {
  if (entries.size() > capacity_) entries.resize(capacity_);
  entries_ = std::move(entries);
}

}  // namespace pollux::agent_detail

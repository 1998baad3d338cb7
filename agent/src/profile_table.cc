// Per-configuration profile of step times (see profile_table.h).
#include "profile_table.h"

#include <algorithm>

namespace pollux::agent_detail {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

}  // namespace

void ProfileEntry::add(double grad_time, double step_time) {
  ++steps;
  if (step_times.size() < kWindow) {
    grad_times.push_back(grad_time);
    step_times.push_back(step_time);
    return;
  }
  grad_times[next] = grad_time;
  step_times[next] = step_time;
  next = (next + 1) % kWindow;
}

ProfileSample ProfileEntry::sample() const {
  ProfileSample s;
  s.nodes = nodes;
  s.replicas = replicas;
  s.atomic_batch = atomic_batch;
  s.grad_time = median(grad_times);
  s.step_time = median(step_times);
  return s;
}

bool ProfileTable::add(int nodes, int replicas, int atomic, double grad_time, double step_time,
                       long long mature_steps) {
  if (!(grad_time > 0) || !(step_time > 0)) return false;
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const ProfileEntry& e) {
    return e.nodes == nodes && e.replicas == replicas && e.atomic_batch == atomic;
  });
  if (it == entries_.end()) {
    if (capacity_ == 0) return false;
    if (entries_.size() >= capacity_) {
      entries_.erase(std::min_element(entries_.begin(), entries_.end(),
                                      [](const ProfileEntry& a, const ProfileEntry& b) { return a.steps < b.steps; }));
    }
    ProfileEntry e;
    e.nodes = nodes;
    e.replicas = replicas;
    e.atomic_batch = atomic;
    entries_.push_back(std::move(e));
    it = entries_.end() - 1;
  }
  it->add(grad_time, step_time);
  return it->steps == mature_steps;
}

std::vector<ProfileSample> ProfileTable::samples() const {
  std::vector<ProfileSample> out;
  out.reserve(entries_.size());
  for (const ProfileEntry& e : entries_)
    if (!e.step_times.empty()) out.push_back(e.sample());
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

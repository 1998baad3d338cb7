// SPDX-License-Identifier: GPL-2.0-or-later
// The smallest size's fit at submission (see submit_fit.h).
#include "submit_fit.h"

#include "slurm_raii.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "job_size_fields.h"

namespace pollux::sched {
namespace {

// What the smallest size needs on each node: CPUs and MB of memory (0: none).
struct Need {
  std::uint64_t cpus = 1;
  std::uint64_t memory = 0;
};

Need need_of(const job_desc_msg_t* d) {
  Need n;
  n.cpus = cpus_per_task(d->cpus_per_task);  // one task (one GPU) per node
  if (d->pn_min_cpus != NO_VAL16 && d->pn_min_cpus > n.cpus) n.cpus = d->pn_min_cpus;
  if (d->pn_min_memory != NO_VAL64 && d->pn_min_memory != 0) {
    if (d->pn_min_memory & MEM_PER_CPU) n.memory = (d->pn_min_memory & ~MEM_PER_CPU) * n.cpus;
    else n.memory = d->pn_min_memory;
  }
  return n;
}

// The partitions the job names, or the default one; `unknown` (when given)
// says whether it names one that does not exist.
std::vector<part_record_t*> partitions_of(const job_desc_msg_t* d, bool* unknown = nullptr) {
  std::vector<part_record_t*> out;
  if (unknown != nullptr) *unknown = false;
  if (d->partition == nullptr || d->partition[0] == '\0') {
    if (default_part_loc != nullptr) out.push_back(default_part_loc);
    return out;
  }
  std::string names = d->partition;
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t comma = names.find(',', start);
    std::string name = names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!name.empty()) {
      if (part_record_t* p = find_part_record(name.data())) out.push_back(p);
      else if (unknown != nullptr) *unknown = true;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Whether some node has (or, with a reboot, can have) the feature.
bool known_feature(const std::string& name) {
  bool found = false;
  for (list_t* features : {active_feature_list, avail_feature_list}) {
    if (found || features == nullptr) continue;
    ListIteratorGuard it(features);
    while (auto* f = it.next<node_feature_t>())
      if (f->name != nullptr && name == f->name) found = true;
  }
  return found;
}

// The feature names of a --constraint expression (a&b, a|b, [a*2&b],
// (a|b)*3, a,b): the words between its operators, counts left out.
std::vector<std::string> feature_names(const std::string& expr) {
  std::vector<std::string> out;
  std::string word;
  bool count = false;  // after '*': digits of a count
  for (const char c : expr + "&") {
    if (count && c >= '0' && c <= '9') continue;
    count = false;
    if (std::string_view("&|,()[]*").find(c) == std::string_view::npos && c != ' ') {
      word += c;
      continue;
    }
    if (!word.empty()) out.push_back(word);
    word.clear();
    count = c == '*';
  }
  return out;
}

}  // namespace

bool slurm_refuses_partition(const job_desc_msg_t* desc) {
  bool unknown = false;
  const std::vector<part_record_t*> parts = partitions_of(desc, &unknown);
  const bool named = desc->partition != nullptr && desc->partition[0] != '\0';
  const bool by_reservation = !named && desc->reservation != nullptr && desc->reservation[0] != '\0';
  return unknown || (parts.empty() && !by_reservation);
}

std::optional<SubmitRefusal> slurm_create_refusal(const job_desc_msg_t* desc, int min_nodes) {
  if (desc->features != nullptr)
    for (const std::string& name : feature_names(desc->features))
      if (!known_feature(name)) return SubmitRefusal{ESLURM_INVALID_FEATURE, slurm_strerror(ESLURM_INVALID_FEATURE)};
  const std::vector<part_record_t*> parts = partitions_of(desc);
  if (parts.empty()) return std::nullopt;
  for (const part_record_t* part : parts)
    if (static_cast<long>(part->total_nodes) >= min_nodes) return std::nullopt;
  return SubmitRefusal{ESLURM_INVALID_NODE_COUNT, slurm_strerror(ESLURM_INVALID_NODE_COUNT)};
}

std::optional<SubmitRefusal> smallest_size_refusal(const job_desc_msg_t* desc, int min_nodes) {
  const std::vector<part_record_t*> parts = partitions_of(desc);
  if (parts.empty()) return std::nullopt;  // Slurm refuses an unknown partition itself
  const Need need = need_of(desc);
  bool cpus_ok = false, mem_ok = false;
  for (part_record_t* part : parts) {
    if (part->node_bitmap == nullptr) continue;
    int fit = 0;
    node_record_t* node = nullptr;
    for (int i = 0; (node = next_node(&i)) != nullptr; ++i) {
      if (!bit_test(part->node_bitmap, node->index)) continue;
      const bool c = node->cpus >= need.cpus, m = need.memory == 0 || node->real_memory >= need.memory;
      cpus_ok |= c;
      mem_ok |= c && m;
      if (c && m) ++fit;
    }
    if (fit >= std::max(min_nodes, 1)) return std::nullopt;
  }
  // Slurm's own words for it (node_scheduler.c: _set_err_msg()).
  SubmitRefusal r;
  r.rc = ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE;
  if (!cpus_ok) r.message = "CPU count per node can not be satisfied";
  else if (!mem_ok) r.message = "Memory specification can not be satisfied";
  else r.message = slurm_strerror(ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
  return r;
}

}  // namespace pollux::sched

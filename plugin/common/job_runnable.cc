// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's own tests of a job (see job_runnable.h).
#include "job_runnable.h"

#include <algorithm>
#include <cstdint>

#include "core/elastic.h"
#include "slurm_raii.h"

extern "C" {
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/reservation.h"
}

namespace pollux::sched {
namespace {

bool takes_jobs(const part_record_t* part) { return part != nullptr && (part->state_up & PARTITION_SCHED) != 0; }

// fn(partition) for each of the job's partitions.
template <typename Fn>
void for_each_partition(const job_record_t* job, Fn&& fn) {
  if (job->part_ptr_list != nullptr) {
    ListIteratorGuard it(job->part_ptr_list);
    while (auto* part = it.next<part_record_t>()) fn(part);
  } else if (job->part_ptr != nullptr) {
    fn(job->part_ptr);
  }
}

}  // namespace

std::string start_blocker(job_record_t* job) {
  if (job->details != nullptr && job->details->depend_list != nullptr) {
    switch (test_job_dependency(job, nullptr)) {
      case LOCAL_DEPEND:
      case REMOTE_DEPEND:
        return "dependency";
      case FAIL_DEPEND:
        return "dependency-never";
      default:
        break;
    }
  }
  if (job->resv_name != nullptr && job_test_resv_now(job) != SLURM_SUCCESS) return "reservation";
  bool up = takes_jobs(job->part_ptr);
  if (!up && job->part_ptr_list != nullptr) {
    ListIteratorGuard it(job->part_ptr_list);
    while (auto* part = it.next<part_record_t>()) up = up || takes_jobs(part);
  }
  return up ? "" : "partition";
}

std::vector<bool> usable_nodes(job_record_t* job) {
  const auto count = static_cast<std::size_t>(std::max(node_record_count, 0));
  std::vector<bool> usable(count, false);
  for_each_partition(job, [&](const part_record_t* part) {
    if (!takes_jobs(part) || part->node_bitmap == nullptr) return;
    for (std::size_t i = 0; i < count; ++i)
      if (bit_test(part->node_bitmap, static_cast<bitoff_t>(i))) usable[i] = true;
  });
  const auto* d = job->details;
  if (d == nullptr) return usable;
  if (d->exc_node_bitmap != nullptr)
    for (std::size_t i = 0; i < count; ++i)
      if (bit_test(d->exc_node_bitmap, static_cast<bitoff_t>(i))) usable[i] = false;
  if (d->feature_list != nullptr || d->feature_list_use != nullptr) {
    bitstr_t* bits = bit_alloc(static_cast<bitoff_t>(count));
    for (std::size_t i = 0; i < count; ++i)
      if (usable[i]) bit_set(bits, static_cast<bitoff_t>(i));
    bool has_xor = false;
    if (valid_feature_counts(job, true, bits, &has_xor) != SLURM_SUCCESS) bit_clear_all(bits);
    for (std::size_t i = 0; i < count; ++i) usable[i] = bit_test(bits, static_cast<bitoff_t>(i));
    bit_free(bits);
  }
  return usable;
}

int partition_max_nodes(const job_record_t* job) {
  std::uint32_t most = 0;
  bool unlimited = false;
  for_each_partition(job, [&](const part_record_t* part) {
    if (part->max_nodes == INFINITE || part->max_nodes == NO_VAL) unlimited = true;
    else most = std::max(most, part->max_nodes);
  });
  return unlimited || most == 0 ? 0 : static_cast<int>(std::min<std::uint32_t>(most, kMaxNodes));
}

std::string limits_refusal(job_record_t* job) {
  if (job->details == nullptr || job->part_ptr == nullptr) return {};  // job_limits_check() aborts on these
  const int reason = job_limits_check(&job, false);
  if (reason == WAIT_NO_REASON) return {};
  // The names squeue shows (Slurm's reason-string function was renamed in 25.x).
  switch (reason) {
    case WAIT_PART_NODE_LIMIT: return "PartitionNodeLimit";
    case WAIT_PART_TIME_LIMIT: return "PartitionTimeLimit";
    case WAIT_PART_DOWN: return "PartitionDown";
    case WAIT_PART_INACTIVE: return "PartitionInactive";
    case WAIT_PART_CONFIG: return "PartitionConfig";
    case WAIT_QOS_THRES: return "QOSUsageThreshold";
    case WAIT_PN_MEM_LIMIT: return "MaxMemPerLimit";
    default: return "reason " + std::to_string(reason);
  }
}

}  // namespace pollux::sched

// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's own tests of a job (see job_runnable.h).
#include "job_runnable.h"

#include "slurm_raii.h"

extern "C" {
#include "src/slurmctld/reservation.h"
}

namespace pollux::sched {
namespace {

bool takes_jobs(const part_record_t* part) { return part != nullptr && (part->state_up & PARTITION_SCHED) != 0; }

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

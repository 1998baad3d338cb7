// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's own tests of a job (see job_runnable.h).
#include "job_runnable.h"

#include <algorithm>
#include <cstdint>

#include "compat_reason.h"
#include "compat_resv.h"
#include "job_acct_limits.h"
#include "job_size_fields.h"
#include "sched/elastic.h"
#include "slurm_raii.h"

extern "C" {
#include "src/slurmctld/node_scheduler.h"
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

Why start_blocker(job_record_t* job) {
  if (job->details != nullptr && job->details->depend_list != nullptr) {
    switch (test_job_dependency(job, nullptr)) {
      case LOCAL_DEPEND:
      case REMOTE_DEPEND:
        return Why::kDependency;
      case FAIL_DEPEND:
        return Why::kDependencyNever;
      default:
        break;
    }
  }
  if (job->resv_name != nullptr && job_test_resv_now(job) != SLURM_SUCCESS) return Why::kReservation;
  bool up = takes_jobs(job->part_ptr);
  if (!up && job->part_ptr_list != nullptr) {
    ListIteratorGuard it(job->part_ptr_list);
    while (auto* part = it.next<part_record_t>()) up = up || takes_jobs(part);
  }
  return up ? Why::kNone : Why::kPartition;
}

namespace {

// --- the job's usable nodes ---

std::vector<bool> usable_nodes(job_record_t* job, time_t now) {
  const auto count = static_cast<std::size_t>(std::max(node_record_count, 0));
  std::vector<bool> usable(count, false);
  for_each_partition(job, [&](const part_record_t* part) {
    if (!takes_jobs(part) || part->node_bitmap == nullptr) return;
    for (std::size_t i = 0; i < count; ++i)
      if (bit_test(part->node_bitmap, static_cast<bitoff_t>(i))) usable[i] = true;
  });
  auto* d = job->details;
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
  // Reservations: the job's own gives it its nodes; others (MAINT, another
  // user's) keep theirs from it. The nodes sched/pollux set as its size are
  // not asked about (Slurm would answer "busy" and stop looking). A job
  // without a time limit is asked about as Slurm will start it, running
  // for a year: a reservation next week keeps its nodes from it now (a
  // shorter horizon would place it where select_nodes() then refuses it).
  bitstr_t* req = d->req_node_bitmap;
  d->req_node_bitmap = nullptr;
  bitstr_t* resv = nullptr;
  const int rc = job_resv_nodes(job, now, &resv);
  d->req_node_bitmap = req;
  if (rc != SLURM_SUCCESS) {
    std::fill(usable.begin(), usable.end(), false);
  } else if (resv != nullptr) {
    for (std::size_t i = 0; i < count; ++i)
      if (static_cast<bitoff_t>(i) >= bit_size(resv) || !bit_test(resv, static_cast<bitoff_t>(i))) usable[i] = false;
  }
  if (resv != nullptr) bit_free(resv);
  return usable;
}

// --- Slurm's limits at a size ---

// The name squeue shows for a reason (compat_reason.h); empty for none.
std::string refusal_name(int reason) {
  return reason == WAIT_NO_REASON ? std::string{} : reason_name(static_cast<uint32_t>(reason));
}

// What job_limits_check() replaced in the copy's record belongs to the job,
// as when Slurm calls it on the job: its priority factors (allocated on
// first use) and, from 24.11, tres_per_task (swapped in, the job's old
// string freed).
void adopt_replaced(job_record_t* job, const job_record_t& copy) {
  if (copy.prio_factors != job->prio_factors) job->prio_factors = copy.prio_factors;
  if (copy.tres_per_task != job->tres_per_task) job->tres_per_task = copy.tres_per_task;
}

}  // namespace

std::string limits_refusal(job_record_t* job) {
  if (job->details == nullptr || job->part_ptr == nullptr) return {};  // job_limits_check() aborts on these
  return refusal_name(job_limits_check(&job, false));
}

std::string limits_refusal_at(job_record_t* job, const Size& size) {
  if (job->details == nullptr) return {};
  const SizeFields fields = size_fields(job, size);
  std::string first;
  bool passed = false;
  for_each_partition(job, [&](part_record_t* part) {
    if (passed || part == nullptr) return;
    // Slurm's records are plain C structs: the copy shares every pointer,
    // and differs only in the size (the fields enact.cc's update sets).
    job_record_t copy = *job;
    JobDetails details = *job->details;
    copy.details = &details;
    copy.part_ptr = part;
    set_size(&details, fields);
    job_record_t* ptr = &copy;
    const std::string why = refusal_name(job_limits_check(&ptr, false));
    adopt_replaced(job, copy);
    if (why.empty()) passed = true;
    else if (first.empty()) first = why;
  });
  return passed ? std::string{} : first;
}

namespace {

// The bounds of the job's partitions (job_bounds() without accounting).
JobBounds partition_bounds(job_record_t* job, int lo, int hi, int gpus, time_t now) {
  JobBounds b;
  b.usable = usable_nodes(job, now);
  if (job->details == nullptr || job->part_ptr == nullptr || lo < 1 || hi < lo || gpus < 1) return b;
  // MaxCPUsPerNode (the most over its partitions): select_nodes() gives
  // the job no more CPUs on a node, so no more GPUs than it has CPUs for.
  std::uint32_t max_cpus = 0;
  bool unlimited = false;
  for_each_partition(job, [&](const part_record_t* part) {
    if (part->max_cpus_per_node == INFINITE || part->max_cpus_per_node == NO_VAL) unlimited = true;
    else max_cpus = std::max(max_cpus, part->max_cpus_per_node);
  });
  int g_max = gpus;
  if (!unlimited) g_max = static_cast<int>(std::min<std::uint32_t>(static_cast<std::uint32_t>(gpus), max_cpus / std::uint32_t{cpus_per_task(job)}));
  if (g_max < 1) {
    b.no_size = "MaxCPUsPerNode";
    return b;
  }
  // Node counts Slurm passes at one GPU per node: the first run of them
  // (at most kProbes counts are asked; above them MaxNodes still bounds).
  constexpr int kProbes = 32;  // each is one job_limits_check() under the job write lock, every round
  int first = 0, last = 0;
  std::string why;
  for (int n = lo; n <= hi && n < lo + kProbes; ++n) {
    const std::string r = limits_refusal_at(job, Size{n, 1});
    if (r.empty()) {
      if (first == 0) first = n;
      last = n;
    } else if (first != 0) {
      break;
    } else if (why.empty()) {
      why = r;
    }
  }
  if (first == 0) {
    b.no_size = why.empty() ? "PartitionNodeLimit" : why;
    return b;
  }
  if (last == lo + kProbes - 1 && last < hi) {  // above the probes: up to MaxNodes (the largest)
    std::uint32_t most = 0;
    bool no_limit = false;
    for_each_partition(job, [&](const part_record_t* part) {
      if (part->max_nodes == INFINITE || part->max_nodes == NO_VAL) no_limit = true;
      else most = std::max(most, part->max_nodes);
    });
    last = no_limit ? hi : std::max(last, static_cast<int>(std::min<std::uint32_t>(most, static_cast<std::uint32_t>(hi))));
  }
  // GPUs per node: the most that every count passes (the largest count
  // asks the most CPUs); fewer nodes when even one GPU each fails there.
  while (last >= first) {
    while (g_max > 1 && !limits_refusal_at(job, Size{last, g_max}).empty()) --g_max;
    if (g_max > 1 || limits_refusal_at(job, Size{last, 1}).empty()) break;
    --last;
  }
  if (last < first) {
    b.no_size = why.empty() ? "PartitionConfig" : why;
    return b;
  }
  if (first > lo) b.min_nodes = first;
  if (last < hi) b.max_nodes = last;
  if (g_max < gpus) b.max_gpus_per_node = g_max;
  return b;
}

// The most GPUs bounds `b` let the job hold on its usable nodes (0: none).
long most_gpus(const JobBounds& b, int lo, int hi, int gpus) {
  if (!b.no_size.empty()) return 0;
  const long usable = std::count(b.usable.begin(), b.usable.end(), true);
  const long nodes = std::min<long>(usable, b.max_nodes > 0 ? b.max_nodes : hi);
  if (nodes < std::max(lo, b.min_nodes)) return 0;
  return nodes * (b.max_gpus_per_node > 0 ? b.max_gpus_per_node : gpus);
}

// A job that names several partitions runs in one of them, on its nodes
// and within its limits (Slurm tries them one at a time), so its bounds are
// one partition's and the policy never places it across two: the one it
// runs in, else the one that lets it hold the most GPUs (the first named
// of equals). Each partition is asked on a copy of the record naming it
// alone (as limits_refusal_at() does).
JobBounds one_partition_bounds(job_record_t* job, int lo, int hi, int gpus, time_t now) {
  if (job->part_ptr_list == nullptr || list_count(job->part_ptr_list) < 2)
    return partition_bounds(job, lo, hi, gpus, now);
  const bool runs = IS_JOB_RUNNING(job) || IS_JOB_SUSPENDED(job);
  JobBounds best;
  long best_gpus = -1;
  bool found_own = false;
  for_each_partition(job, [&](part_record_t* part) {
    if (found_own || part == nullptr) return;
    job_record_t copy = *job;
    copy.part_ptr = part;
    copy.part_ptr_list = nullptr;
    JobBounds b = partition_bounds(&copy, lo, hi, gpus, now);
    adopt_replaced(job, copy);
    const long most = most_gpus(b, lo, hi, gpus);
    found_own = runs && job->part_ptr == part;
    if (found_own || most > best_gpus) {
      best = std::move(b);
      best_gpus = most;
    }
  });
  return best;
}

}  // namespace

JobBounds job_bounds(job_record_t* job, int lo, int hi, int gpus, time_t now) {
  JobBounds b = one_partition_bounds(job, lo, hi, gpus, now);
  if (!b.no_size.empty()) return b;
  // QOS and association limits narrow them (a pending job they allow no
  // size is told which limit).
  const AcctLimits acct = acct_limits(job, ElasticRange{lo, hi, gpus});
  if (acct.max_nodes > 0 && (b.max_nodes == 0 || acct.max_nodes < b.max_nodes)) b.max_nodes = acct.max_nodes;
  b.max_gpus = acct.max_gpus;
  b.no_size = acct.refusal;
  return b;
}

std::string limits_key(const job_record_t* job) {
  std::string key;
  auto add = [&](const auto& v) {
    key += std::to_string(v);
    key += ',';
  };
  for_each_partition(job, [&](const part_record_t* part) {
    key += part->name != nullptr ? part->name : "";
    key += ':';
    add(part->min_nodes), add(part->max_nodes), add(part->max_time), add(part->max_cpus_per_node);
    add(part->total_nodes), add(part->total_cpus), add(part->state_up), add(part->max_mem_per_cpu);
  });
  key += job->resv_name != nullptr ? job->resv_name : "";
  key += ';';
  add(job->qos_id);
  key += job->account != nullptr ? job->account : "";
  return key;
}

}  // namespace pollux::sched

// SPDX-License-Identifier: GPL-2.0-or-later
// A job's QOS and association limits (see job_acct_limits.h).
#include "job_acct_limits.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compat_reason.h"
#include "job_size_fields.h"
#include "sched/size_limits.h"

extern "C" {
#include "src/common/assoc_mgr.h"
#include "src/slurmctld/acct_policy.h"
}

namespace pollux::sched {
namespace {

struct Verdict {
  bool ok = true;
  uint32_t reason = static_cast<uint32_t>(WAIT_NO_REASON);
};

// Slurm's test of `req`; what it writes into the job (its state reason and
// text, the QOS blocking it) is put back. Caller holds the assoc_mgr locks.
Verdict post_select(job_record_t* job, std::vector<uint64_t>& req) {
  const uint32_t reason = job->state_reason;
  char* desc = job->state_desc;
  auto* blocking = job->qos_blocking_ptr;
  job->state_desc = nullptr;
  Verdict v;
  v.ok = acct_policy_job_runnable_post_select(job, req.data(), true);
  v.reason = v.ok ? static_cast<uint32_t>(WAIT_NO_REASON) : job->state_reason;
  xfree(job->state_desc);
  job->state_desc = desc;
  job->state_reason = reason;
  job->qos_blocking_ptr = blocking;
  return v;
}

FullTest classify(const Verdict& v) {
  if (v.ok) return FullTest::kPass;
  const char* name = reason_name(v.reason);
  return std::strstr(name, "PerJob") != nullptr || std::strstr(name, "PerNode") != nullptr ? FullTest::kPerJob
                                                                                          : FullTest::kUsage;
}

// The assoc_mgr read locks Slurm's test needs, held for one job's search.
class AssocReadLocks {
 public:
  AssocReadLocks() {
    locks_.assoc = READ_LOCK;
    locks_.qos = READ_LOCK;
    locks_.tres = READ_LOCK;
    assoc_mgr_lock(&locks_);
  }
  ~AssocReadLocks() { assoc_mgr_unlock(&locks_); }
  AssocReadLocks(const AssocReadLocks&) = delete;
  AssocReadLocks& operator=(const AssocReadLocks&) = delete;

 private:
  assoc_mgr_lock_t locks_{};
};

}  // namespace

AcctLimits acct_limits(job_record_t* job, const ElasticRange& range) {
  AcctLimits out;
  if (!(accounting_enforce & ACCOUNTING_ENFORCE_LIMITS) || job->part_ptr == nullptr || slurmctld_tres_cnt <= 0)
    return out;
  const auto count = static_cast<std::size_t>(slurmctld_tres_cnt);
  const bool running = IS_JOB_RUNNING(job);

  const AssocReadLocks locks;
  slurmdb_tres_rec_t gpu_tres{};
  gpu_tres.type = const_cast<char*>("gres");
  gpu_tres.name = const_cast<char*>("gpu");
  const int gpu = assoc_mgr_find_tres_pos(&gpu_tres, true);  // -1: AccountingStorageTRES lacks gres/gpu
  std::vector<uint64_t> base(count, 0), held(count, 0);
  if (job->tres_req_cnt != nullptr) std::copy(job->tres_req_cnt, job->tres_req_cnt + count, base.begin());
  if (running && job->tres_alloc_cnt != nullptr) std::copy(job->tres_alloc_cnt, job->tres_alloc_cnt + count, held.begin());
  auto request = [&](int nodes, int gpus) {
    std::vector<uint64_t> r = base;
    set_size_tres(r, job, nodes, gpus, gpu);
    return r;
  };
  auto allowed = [&](int nodes, int gpus, int size, int held_size) {
    std::vector<uint64_t> full = request(nodes, gpus);
    const Verdict v = post_select(job, full);
    if (!running) return v.ok;
    if (size <= held_size || v.ok) return true;
    std::vector<uint64_t> growth(count, 0);
    for (std::size_t i = 0; i < count; ++i) growth[i] = full[i] > held[i] ? full[i] - held[i] : 0;
    const FullTest f = classify(v);
    return running_size_allowed(size, held_size, f, f == FullTest::kUsage && post_select(job, growth).ok);
  };
  const int gpn = std::max(range.gpus_per_node, 1);
  const int held_gpus = gpu >= 0 ? static_cast<int>(std::min<uint64_t>(held[static_cast<std::size_t>(gpu)], 1u << 20)) : 0;
  const int held_nodes = running ? static_cast<int>(std::min<uint64_t>(held[TRES_ARRAY_NODE], 1u << 20)) : 0;
  // GPUs on the fewest nodes that hold them; nodes with one GPU each (the
  // fewest GPUs so many nodes take): each bound is tested on its own TRES.
  const int max_gpus = largest_allowed(1, range.max_gpus(), [&](int g) {
    return allowed((g + gpn - 1) / gpn, g, g, held_gpus);
  });
  const int max_nodes = largest_allowed(1, range.max_nodes, [&](int n) { return allowed(n, n, n, held_nodes); });
  if (!running && (max_gpus < range.min_gpus() || max_nodes < range.min_nodes)) {
    std::vector<uint64_t> least = request(range.min_nodes, range.min_gpus());
    const Verdict v = post_select(job, least);
    out.refusal = v.ok ? "AccountingPolicy" : reason_name(v.reason);
  }
  if (max_gpus < range.max_gpus()) out.max_gpus = std::max(max_gpus, 0);
  if (max_nodes < range.max_nodes) out.max_nodes = std::max(max_nodes, 0);
  return out;
}

}  // namespace pollux::sched

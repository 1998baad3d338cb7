// SPDX-License-Identifier: GPL-2.0-or-later
// Hint reading (see hints.h).
#include "hints.h"

#include <sys/stat.h>

#include <cerrno>
#include <unordered_set>

#include "pollux/hint.h"

namespace pollux::sched {

JobInput job_input(const Hint& hint) {
  JobInput in;
  in.model = model_from_hint(hint);
  if (hint.checkpoint && hint.checkpoint->ready_for_requeue) in.checkpoint_ack = hint.checkpoint->time;
  in.max_profiled_replicas = hint.max_profiled_replicas;
  return in;
}

std::vector<JobInput> HintReader::read(const Snapshot& snap, const std::string& spool_dir) {
  std::vector<JobInput> inputs(snap.jobs.size());
  std::unordered_set<std::uint32_t> seen;
  for (std::size_t i = 0; i < snap.jobs.size(); ++i) {
    const ElasticJobSnapshot& job = snap.jobs[i];
    if (job.held_by_other) continue;
    seen.insert(job.job_id);
    const std::string path = hint_path(spool_dir, job.job_id);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) {  // no hint yet: no model, nothing to log
      cache_.erase(job.job_id);
      logged_.erase(job.job_id);
      continue;
    }
    const std::int64_t mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    auto cached = cache_.find(job.job_id);
    if (cached != cache_.end() && S_ISREG(st.st_mode) && st.st_uid == job.uid && cached->second.ino == st.st_ino &&
        cached->second.size == st.st_size && cached->second.mtime_ns == mtime_ns) {
      inputs[i] = cached->second.input;
      continue;
    }
    HintResult r = read_hint_file(path, job.uid, job.job_id);
    if (!r) {
      cache_.erase(job.job_id);
      std::string& last = logged_[job.job_id];
      if (last != r.error) {
        last = r.error;
        log_("JobId=" + std::to_string(job.job_id) + ": hint rejected, no model used: " + r.error);
      }
      continue;
    }
    logged_.erase(job.job_id);
    inputs[i] = job_input(*r.hint);
    cache_[job.job_id] = Cached{st.st_ino, st.st_size, mtime_ns, inputs[i]};
  }
  for (auto it = cache_.begin(); it != cache_.end();) it = seen.count(it->first) ? std::next(it) : cache_.erase(it);
  for (auto it = logged_.begin(); it != logged_.end();) it = seen.count(it->first) ? std::next(it) : logged_.erase(it);
  return inputs;
}

}  // namespace pollux::sched

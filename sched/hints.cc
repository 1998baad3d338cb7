// SPDX-License-Identifier: GPL-2.0-or-later
// Hint reading (see hints.h).
#include "hints.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "log_safe.h"
#include "pollux/hint.h"

namespace pollux::sched {

JobInput job_input(const Hint& hint) {
  JobInput in;
  static_cast<AgentMeasures&>(in) = hint;
  in.model = model_from_hint(hint);
  if (hint.checkpoint && hint.checkpoint->ready_for_requeue) in.checkpoint_ack = hint.checkpoint->time;
  in.resize_signal = hint.resize_signal;
  in.hint_restarts = hint.restart_count;
  return in;
}

std::vector<JobInput> HintReader::read(const Snapshot& snap, const std::string& spool_dir) {
  std::vector<JobInput> inputs(snap.jobs.size());
  std::unordered_set<std::uint32_t> seen;
  for (std::size_t i = 0; i < snap.jobs.size(); ++i) {
    const ElasticJobSnapshot& job = snap.jobs[i];
    if (job.held_by_other) continue;
    seen.insert(job.job_id);
    // A line is logged once while its reason stays the same. The reason
    // quotes the file's bytes: log_safe() keeps it on one line.
    const auto log_once = [&](const char* kind, const std::string& why, const char* what) {
      const std::string line = log_safe("JobId=" + std::to_string(job.job_id) + ": " + what + why);
      std::string& last = logged_[job.job_id];
      if (last != line) {
        last = line;
        log_(line);
        ++rejections_[kind];
      }
    };
    // No model this round.
    const auto reject = [&](const char* kind, const std::string& why) {
      cache_.erase(job.job_id);
      log_once(kind, why, "hint rejected, no model used: ");
    };
    const std::string path = hint_path(spool_dir, job.job_id);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT) {  // no hint yet: no model, nothing to log
        cache_.erase(job.job_id);
        logged_.erase(job.job_id);
        continue;
      }
      // Nothing is known about the entry (ESTALE or EIO on a network file
      // system, ELOOP, ENAMETOOLONG): it is neither judged nor removed, and
      // a valid hint read before stays in use.
      const std::string why = path + ": cannot examine it: " + std::strerror(err);
      const auto cached = cache_.find(job.job_id);
      if (cached == cache_.end()) {
        reject("unexaminable", why);
      } else {
        inputs[i] = cached->second.input;
        log_once("unexaminable", why, "hint not read, the last valid one stays in use: ");
      }
      continue;
    }
    if (st.st_uid != job.uid && !S_ISDIR(st.st_mode)) {
      // Not the job's user's: planted under this job's name by someone else
      // (the spool is world-writable). Refused, and removed, since the
      // sticky bit would keep the job's own agent from replacing it.
      std::string why = path + ": owned by uid " + std::to_string(st.st_uid) + ", not the job's user " +
                        std::to_string(job.uid);
      why += ::unlink(path.c_str()) == 0 ? " (removed)" : std::string(" (cannot remove it: ") + std::strerror(errno) + ")";
      reject("owner", why);
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
    const char* kind = "invalid";
    if (r && job.submit_time > 0 && r.hint->timestamp < job.submit_time - kHintClockSlack) {
      r.error = path + ": written at " + std::to_string(static_cast<long long>(r.hint->timestamp)) +
                ", before the job was submitted (" + std::to_string(static_cast<long long>(job.submit_time)) +
                "): left by an earlier job with the same id";
      r.hint.reset();
      kind = "earlier-job";
    }
    if (!r) {
      reject(kind, r.error);
      continue;
    }
    logged_.erase(job.job_id);
    inputs[i] = job_input(*r.hint);
    cache_[job.job_id] = Cached{st.st_ino, st.st_size, mtime_ns, inputs[i]};
  }
  // A run's hints have no restart time before its first step: the job's
  // last one stands meanwhile (a restart does not make its cost unknown).
  for (std::size_t i = 0; i < snap.jobs.size(); ++i) {
    if (snap.jobs[i].held_by_other) continue;
    double& known = restart_seconds_[snap.jobs[i].job_id];
    if (inputs[i].restart_seconds > 0)
      known = inputs[i].restart_seconds;
    else
      inputs[i].restart_seconds = known;
  }
  for (auto it = cache_.begin(); it != cache_.end();) it = seen.count(it->first) ? std::next(it) : cache_.erase(it);
  for (auto it = restart_seconds_.begin(); it != restart_seconds_.end();)
    it = seen.count(it->first) ? std::next(it) : restart_seconds_.erase(it);
  for (auto it = logged_.begin(); it != logged_.end();) it = seen.count(it->first) ? std::next(it) : logged_.erase(it);
  return inputs;
}

std::map<std::string, long long> HintReader::take_rejections() { return std::exchange(rejections_, {}); }

namespace {

// The job id of a spool entry the agents or sched/pollux write:
// "<id>.hint.yaml", "<id>.resize" (resize decisions) or their temporary
// ".<name>.tmp.XXXXXX"; nullopt for any other name.
std::optional<std::uint32_t> spool_entry_job(std::string_view name) {
  if (!name.empty() && name.front() == '.') {
    name.remove_prefix(1);
    const auto tmp = name.find(".tmp.");
    if (tmp == std::string_view::npos) return std::nullopt;
    name = name.substr(0, tmp);
  }
  bool known = false;
  for (const std::string_view suffix : {std::string_view(".hint.yaml"), std::string_view(".resize")}) {
    if (known || name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) continue;
    name.remove_suffix(suffix.size());
    known = true;
  }
  if (!known) return std::nullopt;
  if (name.size() > 10) return std::nullopt;
  std::uint64_t id = 0;
  for (const char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (id == 0 || id > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(id);
}

}  // namespace

SpoolSweep sweep_spool(const Snapshot& snap, const std::string& spool_dir, double max_age) noexcept {
  SpoolSweep out;
  try {
    std::unordered_set<std::uint32_t> live;
    for (const ElasticJobSnapshot& j : snap.jobs) live.insert(j.job_id);
    const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(spool_dir.c_str()), ::closedir);
    if (!dir) {
      out.errors.push_back("cannot read the spool " + spool_dir + ": " + std::strerror(errno));
      return out;
    }
    const int fd = ::dirfd(dir.get());
    while (const dirent* e = ::readdir(dir.get())) {
      const std::optional<std::uint32_t> id = spool_entry_job(e->d_name);
      if (!id || live.count(*id)) continue;
      struct stat st {};
      if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
      if (S_ISDIR(st.st_mode) || snap.now - static_cast<double>(st.st_mtim.tv_sec) < max_age) continue;
      if (::unlinkat(fd, e->d_name, 0) == 0)
        ++out.removed;
      else if (errno != ENOENT)
        out.errors.push_back(log_safe("cannot remove " + spool_dir + "/" + e->d_name + ": " + std::strerror(errno)));
    }
  } catch (...) {
    out.errors.push_back("out of memory sweeping the spool " + spool_dir);
  }
  return out;
}

}  // namespace pollux::sched

// SPDX-License-Identifier: GPL-2.0-or-later
// The scheduling thread (see round_thread.h).
#include "round_thread.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "common/slurm_api.h"
#include "common/compat_locks.h"
#include "common/compat_thread.h"
#include "common/slurm_raii.h"
#include "core/hints.h"
#include "core/params.h"
#include "core/resize_request.h"
#include "core/round.h"
#include "core/round_memory.h"
#include "core/round_stats.h"
#include "enact.h"
#include "publish_stats.h"
#include "snapshot.h"

extern "C" {
#include "src/plugins/sched/backfill/backfill.h"
}

namespace pollux::sched {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

class RoundThread {
 public:
  void start(const Params& initial) {
    params_ = initial;
    thread_ = std::thread([this] { run(); });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  void reconfigure() {
    {
      std::lock_guard<std::mutex> g(mu_);
      reconfig_ = true;
    }
    cv_.notify_all();
  }

 private:
  // The thread's function: an exception leaving it would terminate
  // slurmctld (std::thread), so none does, even from the waiting itself.
  void run() noexcept {
    try {
      loop();
    } catch (const std::exception& e) {
      error("sched/pollux: the round thread stopped: %s; elastic jobs keep their sizes until slurmctld restarts",
            e.what());
    } catch (...) {
      error("sched/pollux: the round thread stopped (unknown exception); elastic jobs keep their sizes until "
            "slurmctld restarts");
    }
  }

  void loop() {
    // Signals belong to slurmctld's signal thread.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    // The first periodic round comes when the last one before a restart
    // left it due, with the policy's search state restored (remember()):
    // the last round's decisions (a resize under way, a job just shrunk)
    // are weighed as without the restart. Meanwhile the light rounds carry
    // on what is in flight (an acknowledgement already written is taken by
    // the first one, in_flight_ below) and the arrivals rounds give
    // pending jobs GPUs.
    Clock::time_point last_start = Clock::now();
    Clock::time_point next_round = last_start + seconds(params_.interval);
    for (;;) {
      bool reload = false;
      {
        std::unique_lock<std::mutex> g(mu_);
        // Every second: a transition round while a job is in flight, an
        // arrivals round when Slurm's jobs changed (a submission, a release,
        // a job's end).
        const Clock::time_point wake = std::min(next_round, Clock::now() + kTick);
        cv_.wait_until(g, wake, [this] { return stop_ || reconfig_; });
        if (stop_) return;
        reload = reconfig_;
        reconfig_ = false;
      }
      try {
        if (reload) {
          load_params();
          if (!remembered_) next_round = recall_rounds();
          next_round = std::min(next_round, last_start + seconds(params_.interval));
        }
        const Clock::time_point now = Clock::now();
        if (now >= next_round) {
          last_start = now;
          round(true);
          next_round = last_start + seconds(params_.interval);
          if (Clock::now() > next_round) {
            verbose("sched/pollux: the round took %.1f s, longer than pollux_interval=%g: the next one starts now",
                    ms_since(last_start) / 1000, params_.interval);
            next_round = Clock::now();
          }
        } else if (jobs_changed()) {
          round(false, true);
        } else if (in_flight_) {
          round(false);
        }
      } catch (const std::exception& e) {
        error("sched/pollux: round failed: %s", e.what());
      } catch (...) {
        error("sched/pollux: round failed (unknown exception)");
      }
    }
  }

  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  void load_params() {
    std::string sched_params, job_submit;
    {
      const SlurmctldLock lock(slurmctld_locks(READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK, NO_LOCK));
      sched_params = slurm_conf.sched_params != nullptr ? slurm_conf.sched_params : "";
      job_submit = slurm_conf.job_submit_plugins != nullptr ? slurm_conf.job_submit_plugins : "";
    }
    ParamsResult parsed = parse_params(sched_params);
    for (const std::string& e : parsed.errors) error("sched/pollux: SchedulerParameters: %s", e.c_str());
    for (const std::string& n : parsed.notes) info("sched/pollux: SchedulerParameters: %s", n.c_str());
    const bool options_changed = !loaded_ || policy_options_differ(parsed.params);
    if (!loaded_ || parsed.params != params_)
      info("sched/pollux: parameters: %s", describe(parsed.params).c_str());
    if (parsed.params.backfill != params_.backfill)  // the backfill thread started with init()
      info("sched/pollux: pollux_backfill=%s takes effect when slurmctld restarts",
           parsed.params.backfill ? "yes" : "no");
    const bool backfill = params_.backfill;
    params_ = parsed.params;
    params_.backfill = backfill;
    loaded_ = true;
    if (options_changed) {
      try {
        policy_ = make_policy("pollux", policy_options(params_));
        const PolicyOptions o = policy_options(params_);
        if (policy_)
          info("sched/pollux: policy %s: fairness_p=%g restart_delay=%g interval=%g interference_avoidance=%s "
               "max_nodes_per_job=%d search_budget=%lld uniform_gpus_per_node=yes",
               std::string(policy_->name()).c_str(), o.fairness_p, o.restart_delay, o.interval,
               o.interference_avoidance ? "yes" : "no", o.max_nodes_per_job, o.search_budget);
        else
          error("sched/pollux: libgoodput has no \"pollux\" policy: running elastic jobs keep their sizes and "
                "pending ones stay held");
      } catch (const std::exception& e) {
        policy_.reset();
        error("sched/pollux: the policy refused its options (%s): running elastic jobs keep their sizes and "
              "pending ones stay held", e.what());
      }
    }
    {
      const SlurmctldLock lock(slurmctld_locks(READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK, NO_LOCK));
      memory_path_ = slurm_conf.state_save_location != nullptr
                         ? std::string(slurm_conf.state_save_location) + "/" + std::string(kRoundMemoryName)
                         : "";
    }
    if (xstrcasestr(job_submit.c_str(), "pollux") == nullptr)
      error("sched/pollux: JobSubmitPlugins does not include pollux: elastic jobs are not held at submission "
            "and Slurm may start them at a size of its own choosing before the first round");
    ensure_spool();
  }

  // At the thread's start: when the first periodic round is due, and the
  // policy's search state, from the memory the last periodic round wrote
  // (round_memory.h).
  Clock::time_point recall_rounds() {
    remembered_ = true;
    const double now = unix_now();
    std::string why = "StateSaveLocation is not set";
    std::optional<RoundMemory> m;
    if (!memory_path_.empty()) m = read_round_memory(memory_path_, &why);
    const double delay = first_round_delay(m, now, params_.interval);
    if (!m) {
      info("sched/pollux: no memory of earlier rounds (%s): the first periodic round comes in %g s", why.c_str(),
           delay);
      return Clock::now() + seconds(delay);
    }
    const bool restored = policy_ && policy_->restore_search_state(m->search_state);
    if (!restored)
      error("sched/pollux: %s: the policy's search state was not restored (%s): the next rounds may decide "
            "differently than without the restart", memory_path_.c_str(),
            policy_ ? "not one this policy wrote" : "no policy");
    info("sched/pollux: rounds remembered from %s: the last periodic round %.1f s ago, the next in %.1f s; "
         "search state %s",
         memory_path_.c_str(), now - m->last_periodic, delay, restored ? "restored" : "not restored");
    return Clock::now() + seconds(delay);
  }

  // After a periodic round: what recall_rounds() reads after a restart.
  void remember_round(double started) {
    if (memory_path_.empty() || !policy_) return;
    const std::string failed = write_round_memory(memory_path_, {started, policy_->search_state()});
    if (!failed.empty() && failed != memory_error_)
      error("sched/pollux: the rounds' memory was not written (a restart would lose it): %s", failed.c_str());
    memory_error_ = failed;
  }

  static double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }

  bool policy_options_differ(const Params& p) const {
    const PolicyOptions a = policy_options(p), b = policy_options(params_);
    return a.fairness_p != b.fairness_p || a.restart_delay != b.restart_delay || a.interval != b.interval ||
           a.interference_avoidance != b.interference_avoidance || a.max_nodes_per_job != b.max_nodes_per_job ||
           a.search_budget != b.search_budget;
  }

  // The spool is world-writable and sticky, like /tmp (doc/hint-format.md).
  void ensure_spool() {
    struct stat st {};
    if (::stat(params_.spool_dir.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        error("sched/pollux: pollux_spool_dir=%s is not a directory: no job's hint can be read",
              params_.spool_dir.c_str());
      else if ((st.st_mode & 01777) != 01777)
        info("sched/pollux: %s is mode %o, not 1777 (world-writable, sticky): jobs may be unable to write "
             "their hints, or able to remove each other's",
             params_.spool_dir.c_str(), st.st_mode & 07777);
      return;
    }
    std::string path;
    for (std::size_t pos = 1; pos != std::string::npos;) {
      pos = params_.spool_dir.find('/', pos + 1);
      path = params_.spool_dir.substr(0, pos);
      if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) break;
    }
    if (::chmod(params_.spool_dir.c_str(), 01777) != 0)
      error("sched/pollux: cannot create the spool %s: %m", params_.spool_dir.c_str());
    else
      info("sched/pollux: created the spool %s (mode 1777)", params_.spool_dir.c_str());
  }

  // Slurm's jobs changed since the last round looked (last_job_update,
  // which slurmctld bumps on every submission, update and end). It counts
  // whole seconds: a change in the second of the last snapshot may have
  // come after it (a job submitted right after a round started its
  // neighbour), so that second is looked at once more.
  bool jobs_changed() {
    time_t t;
    {
      const SlurmctldLock lock(slurmctld_locks(NO_LOCK, READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK));
      t = last_job_update;
    }
    return t != seen_job_update_ || t >= seen_at_;
  }

  // full: the periodic round (the policy sizes every job); arrivals: the
  // prompt one (the policy sizes only jobs without GPUs, plan_round); else
  // a transition round (no policy: checkpoints acknowledged, jobs started).
  void round(bool full, bool arrivals = false) {
    const Clock::time_point t0 = Clock::now();
    const double started = unix_now();
    Snapshot snap;
    {
      // The job write lock: Slurm's dependency test updates the job (snapshot.h).
      const SlurmctldLock lock(slurmctld_locks(READ_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK, READ_LOCK));
      snap = take_snapshot(static_cast<double>(std::time(nullptr)));
      seen_job_update_ = last_job_update;
      seen_at_ = static_cast<time_t>(snap.now);
    }
    const double read_ms = ms_since(t0);
    apply_refused(snap);
    const std::vector<JobInput> inputs = hints_.read(snap, params_.spool_dir);
    if (full && snap.now >= next_sweep_) {
      next_sweep_ = snap.now + kSweepEvery;
      const SpoolSweep sweep = sweep_spool(snap, params_.spool_dir, kSweepEvery);
      for (const std::string& e : sweep.errors) error("sched/pollux: %s", e.c_str());
      if (sweep.removed > 0)
        debug("sched/pollux: removed %d hint file(s) of ended jobs from %s", sweep.removed, params_.spool_dir.c_str());
    }
    const Clock::time_point t1 = Clock::now();
    RoundResult result =
        plan_round(snap, inputs, params_, full || arrivals ? policy_.get() : nullptr, arrivals && !full);
    write_resize_requests(snap, result, params_.spool_dir,  // before the signals, outside the locks
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count());
    const double plan_ms = ms_since(t1);
    if (full) remember_round(started);
    if (!result.error.empty()) error("sched/pollux: %s: no size changes this round", result.error.c_str());

    EnactReport report;
    double write_ms = 0;
    if (needs_enact(snap, result)) {
      const Clock::time_point t2 = Clock::now();
      {
        const SlurmctldLock lock(slurmctld_locks(READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK));
        report = enact(snap, result);
      }
      write_ms = ms_since(t2);
    }
    for (const std::string& e : report.errors) error("sched/pollux: %s", e.c_str());
    log_refusals(snap, report);
    for (const JobDecision& d : result.decisions) {
      if (!d.note.empty()) info("sched/pollux: JobId=%u: %s", snap.jobs[d.job].job_id, d.note.c_str());
      if (d.action == Action::kNone) continue;
      const ElasticJobSnapshot& j = snap.jobs[d.job];
      // A job its QOS or association limits stop: which limit, as Slurm names it.
      const std::string limit = d.state.why == "limits" && !j.no_size.empty() ? " limit=" + j.no_size : "";
      info("sched/pollux: JobId=%u: %s %s why=%s%s (%s)", j.job_id, action_name(d.action),
           d.state.alloc.empty() ? "0 GPUs" : (std::to_string(d.state.alloc.nodes) + "x" +
                                               std::to_string(d.state.alloc.gpus_per_node) + " GPUs on " +
                                               d.state.alloc.node_list).c_str(),
           d.state.why.c_str(), limit.c_str(), d.comment.c_str());
    }
    // Slurm's main loop starts released jobs; kick it rather than wait for
    // its own interval (sched_interval, 60 s by default), also while a
    // decided job waits for its begin time or for its nodes.
    bool waiting = false;
    for (const JobDecision& d : result.decisions) {
      const ElasticJobSnapshot& j = snap.jobs[d.job];
      if (d.state.phase == Phase::kStarting && !j.running && !j.completing && j.begin_time <= snap.now)
        waiting = true;
    }
    if (report.changed()) schedule_job_save();
    if (waiting || report.released + report.requeued + report.restarted_early > 0) queue_job_scheduler();
    in_flight_ = false;
    for (const JobDecision& d : result.decisions)
      if (d.state.phase == Phase::kCheckpointing || d.state.phase == Phase::kStarting) in_flight_ = true;
    if (full)
      debug("sched/pollux: round: %zu elastic jobs, %zu GPU nodes, %d GPUs kept for rigid jobs; lock hold: "
            "read %.3f ms, write %.3f ms; policy %.1f ms (%lld evaluations); total %.1f ms",
            snap.jobs.size(), snap.nodes.size(), result.reserved_gpus, read_ms, write_ms, plan_ms,
            static_cast<long long>(result.report.evaluations), ms_since(t0));
    else if (arrivals)
      debug("sched/pollux: arrivals round: %zu elastic jobs; lock hold: read %.3f ms, write %.3f ms; policy %.1f ms",
            snap.jobs.size(), read_ms, write_ms, plan_ms);
    else
      debug2("sched/pollux: transition round: lock hold: read %.3f ms, write %.3f ms", read_ms, write_ms);
    stats_.add(snap, inputs, result,
               {full ? RoundKind::kPeriodic : arrivals ? RoundKind::kArrivals : RoundKind::kTransition, read_ms,
                plan_ms, ms_since(t0), write_ms > 0, write_ms, static_cast<int>(report.errors.size()),
                static_cast<int>(report.refusals.size()), hints_.take_rejections()});
    publisher_.publish(stats_, params_);
  }

  // Sizes Slurm refused stay refused for the job (never proposed again)
  // until its partitions, limits or range change; a job that Slurm allows
  // no size is logged once per reason.
  void apply_refused(Snapshot& snap) {
    for (ElasticJobSnapshot& j : snap.jobs) {
      auto it = refused_.find(j.job_id);
      if (it != refused_.end() && it->second.key != refusal_key(j)) refused_.erase(it);
      if (j.refused_now && remember_refused(j, *j.refused_now))
        error("sched/pollux: JobId=%u: Slurm found %dx%d GPUs impossible (BadConstraints); never given this size "
              "again until its partition, limits or range change",
              j.job_id, j.refused_now->nodes, j.refused_now->gpus_per_node);
      it = refused_.find(j.job_id);
      if (it != refused_.end()) j.refused = it->second.sizes;
      std::string& logged = no_size_logged_[j.job_id];
      if (!j.no_size.empty() && logged != j.no_size)
        error("sched/pollux: JobId=%u: Slurm allows it no size of its range %s (%s): no GPUs until its partition, "
              "limits or range change", j.job_id, format_range(j.range).c_str(), j.no_size.c_str());
      logged = j.no_size;
    }
    forget_ended(snap, refused_);
    forget_ended(snap, no_size_logged_);
  }

  // Each job's refusal by Slurm is logged once per reason, and its size is
  // never proposed again (apply_refused).
  void log_refusals(const Snapshot& snap, const EnactReport& report) {
    for (const EnactReport::Refusal& f : report.refusals) {
      const ElasticJobSnapshot* j = nullptr;
      for (const ElasticJobSnapshot& x : snap.jobs)
        if (x.job_id == f.job) j = &x;
      if (j == nullptr) continue;
      remember_refused(*j, f.size);
      std::string& logged = refused_.at(f.job).logged;
      if (logged != f.reason) error("sched/pollux: %s", f.message.c_str());
      logged = f.reason;
    }
  }

  // What a job's refused sizes hold for: its limits_key and range.
  static std::string refusal_key(const ElasticJobSnapshot& j) { return j.limits_key + "|" + format_range(j.range); }

  // Adds `size` to the job's refused sizes; false when it was there.
  bool remember_refused(const ElasticJobSnapshot& j, const Size& size) {
    Refused& r = refused_.try_emplace(j.job_id, Refused{refusal_key(j), {}, {}}).first->second;
    if (std::find(r.sizes.begin(), r.sizes.end(), size) != r.sizes.end()) return false;
    r.sizes.push_back(size);
    return true;
  }

  template <typename Map>
  static void forget_ended(const Snapshot& snap, Map& map) {
    for (auto it = map.begin(); it != map.end();) {
      const bool known = std::any_of(snap.jobs.begin(), snap.jobs.end(),
                                     [&](const ElasticJobSnapshot& j) { return j.job_id == it->first; });
      it = known ? std::next(it) : map.erase(it);
    }
  }

  struct Refused {
    std::string key;          // the job's limits_key and range when refused
    std::vector<Size> sizes;  // never proposed again while the key holds
    std::string logged;       // the reason last logged
  };
  std::map<std::uint32_t, Refused> refused_;
  std::map<std::uint32_t, std::string> no_size_logged_;  // job -> the no-size reason last logged
  static constexpr Clock::duration kTick = std::chrono::seconds(1);
  // Hints of ended jobs are removed once they are this old, checked as often.
  static constexpr double kSweepEvery = 3600;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool reconfig_ = true;  // the first thing the thread does: read the parameters
  bool in_flight_ = true;  // until the first round says: a restart may find resizes under way
  time_t seen_job_update_ = 0;
  time_t seen_at_ = 0;  // the second of the last snapshot
  double next_sweep_ = 0;
  bool loaded_ = false;
  bool remembered_ = false;  // recall_rounds() ran
  std::string memory_path_;  // <StateSaveLocation>/pollux_rounds; empty: not set
  std::string memory_error_;  // the last failure to write it, logged once
  Params params_;
  std::unique_ptr<Policy> policy_;
  HintReader hints_{[](const std::string& line) { error("sched/pollux: %s", line.c_str()); }};
  RoundStats stats_{static_cast<double>(std::time(nullptr))};
  StatsPublisher publisher_;
  std::thread thread_;
};

RoundThread* rounds = nullptr;
pthread_t backfill_thread = 0;

}  // namespace

void start_rounds() {
  // Called with the configuration write-locked: read it directly.
  const ParamsResult parsed = parse_params(slurm_conf.sched_params != nullptr ? slurm_conf.sched_params : "");
  rounds = new RoundThread;
  rounds->start(parsed.params);
  if (parsed.params.backfill) {
    POLLUX_THREAD_CREATE("bckfl", &backfill_thread, backfill_agent, nullptr);
    info("sched/pollux: Slurm's backfill scheduler runs for rigid jobs (pollux_backfill=yes)");
  } else {
    info("sched/pollux: no backfill (pollux_backfill=no): rigid jobs start in priority order only");
  }
  // slurmctld 22.05 accepts heterogeneous jobs only with sched/backfill
  // (proc_req.c): say so, rather than let admins find out from users.
  info("sched/pollux: heterogeneous jobs are refused by slurmctld under any SchedulerType but sched/backfill");
}

void stop_rounds() {
  if (backfill_thread != 0) {
    stop_backfill_agent();
    POLLUX_THREAD_JOIN(backfill_thread);
  }
  if (rounds != nullptr) {
    rounds->stop();
    delete rounds;
    rounds = nullptr;
  }
}

void reconfigure_rounds() {
  if (rounds != nullptr) rounds->reconfigure();
  if (backfill_thread != 0) backfill_reconfig();
}

}  // namespace pollux::sched

// SPDX-License-Identifier: GPL-2.0-or-later
// The scheduling thread (see round_thread.h).
#include "round_thread.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/slurm_api.h"
#include "common/compat_locks.h"
#include "common/compat_thread.h"
#include "common/slurm_raii.h"
#include "io/round_memory.h"
#include "io/round_stats.h"
#include "io/spool_setup.h"
#include "io/spool_space.h"
#include "io/type_speeds_file.h"
#include "pollux/policies.h"
#include "sched/boot_times.h"
#include "sched/freed_gpus.h"
#include "sched/hints.h"
#include "sched/params.h"
#include "sched/refused_sizes.h"
#include "sched/resize_request.h"
#include "sched/round.h"
#include "enact.h"
#include "enact_power.h"
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
    started_ = unix_now();
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
          if (!remembered_) {
            next_round = recall_rounds();
            recall_type_speeds();
            if (const std::string e = boot_times_.recall(); !e.empty()) error("sched/pollux: %s", e.c_str());
          }
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
        } else if (jobs_changed() ? round(false, true) : in_flight_ && round(false)) {
          last_start = now;  // a periodic round brought forward: the next one an interval later
          next_round = last_start + seconds(params_.interval);
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
    const bool options_changed = !loaded_ || policy_changed(parsed.params, params_);
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
        const std::string name(scheduler_policy().name);
        policy_ = make_policy(name, policy_options(params_));
        const PolicyOptions o = policy_options(params_);
        if (policy_)
          info("sched/pollux: policy %s: fairness_p=%g restart_delay=%g interval=%g interference_avoidance=%s "
               "max_nodes_per_job=%d search_budget=%lld uniform_gpus_per_node=yes",
               std::string(policy_->name()).c_str(), o.fairness_p, params_.restart_penalty, params_.interval,
               o.interference_avoidance ? "yes" : "no", o.max_nodes_per_job, o.search_budget);
        else
          error("sched/pollux: libgoodput has no \"%s\" policy: running elastic jobs keep their sizes and "
                "pending ones stay held", name.c_str());
      } catch (const std::exception& e) {
        policy_.reset();
        error("sched/pollux: the policy refused its options (%s): running elastic jobs keep their sizes and "
              "pending ones stay held", e.what());
      }
    }
    {
      const SlurmctldLock lock(slurmctld_locks(READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK, NO_LOCK));
      const std::string state = slurm_conf.state_save_location != nullptr ? slurm_conf.state_save_location : "";
      memory_path_ = state.empty() ? "" : state + "/" + std::string(kRoundMemoryName);
      type_speeds_path_ = state.empty() ? "" : state + "/" + std::string(kTypeSpeedsName);
      boot_times_.set_file(state.empty() ? "" : state + "/" + std::string(kBootTimesName));
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

  // At the thread's start: what the GPU types' speed learner had learnt
  // before the restart (type_speeds_file.h); taken up by the first round
  // for the pairs of types the cluster still has.
  void recall_type_speeds() {
    if (type_speeds_path_.empty()) return;
    ParsedTypeSpeeds r = read_type_speeds(type_speeds_path_);
    if (r.missing) return;  // none learnt yet
    if (!r.error.empty()) {
      error("sched/pollux: %s", r.error.c_str());
      return;
    }
    type_speeds_.restore(std::move(r.learnt));
  }

  // After the learner saw a round: its state kept when it changed, and
  // whether it took up what recall_type_speeds() read.
  void keep_type_speeds() {
    if (const std::optional<bool> restored = type_speeds_.take_restored())
      info("sched/pollux: %s: learnt GPU type speeds %s", type_speeds_path_.c_str(),
           *restored ? "restored" : "not used (learnt on other GPU types): started over");
    if (type_speeds_path_.empty() || !type_speeds_.take_changed()) return;
    const std::string failed = write_type_speeds(type_speeds_path_, type_speeds_.learnt());
    if (!failed.empty() && failed != type_speeds_error_)
      error("sched/pollux: the learnt GPU type speeds were not written (a restart would lose them): %s",
            failed.c_str());
    type_speeds_error_ = failed;
  }

  static double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }

  void ensure_spool() {
    const SpoolSetup spool = prepare_spool(params_.spool_dir);
    if (spool.error) error("sched/pollux: %s", spool.message.c_str());
    else if (!spool.message.empty()) info("sched/pollux: %s", spool.message.c_str());
  }

  // The spool's space, each round (one statvfs): logged when it fills up
  // or has room again, and a running job left without a hint says why.
  void check_spool_space(Snapshot& snap) {
    const SpoolSpace now = spool_space(params_.spool_dir);
    bool is_error = false;
    const std::string line = spool_space_change(spool_, now, params_.spool_dir, &is_error);
    if (!line.empty()) {
      if (is_error) error("sched/pollux: %s", line.c_str());
      else info("sched/pollux: %s", line.c_str());
    }
    spool_ = now;
    snap.spool_full = now.full;
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
  // A round that finds GPUs a job's end freed is the periodic one, brought
  // forward (freed_gpus.h). Returns whether the policy sized every job.
  bool round(bool full, bool arrivals = false) {
    const Clock::time_point t0 = Clock::now();
    const double started = unix_now();
    Snapshot snap;
    {
      // The job write lock: Slurm's dependency test updates the job (snapshot.h).
      const SlurmctldLock lock(slurmctld_locks(READ_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK, READ_LOCK));
      snap = take_snapshot(static_cast<double>(std::time(nullptr)));
      snap.loaded = started_;
      seen_job_update_ = last_job_update;
      seen_at_ = static_cast<time_t>(snap.now);
    }
    const double read_ms = ms_since(t0);
    for (const std::string& line : boot_times_.observe(snap)) info("sched/pollux: %s", line.c_str());
    const bool forward = freed_.seen(snap) && !full;
    full = full || forward;
    for (const std::string& p : snap.comment_problems) error("sched/pollux: %s", p.c_str());
    for (const std::string& line : refused_.apply(snap)) error("sched/pollux: %s", line.c_str());
    check_spool_space(snap);
    const std::vector<JobInput> inputs = hints_.read(snap, params_.spool_dir);
    if (full && snap.now >= next_sweep_) {
      next_sweep_ = snap.now + kSweepEvery;
      const SpoolSweep sweep = sweep_spool(snap, params_.spool_dir, kSweepEvery);
      for (const std::string& e : sweep.errors) error("sched/pollux: %s", e.c_str());
      if (sweep.removed > 0)
        debug("sched/pollux: removed %d hint file(s) of ended jobs from %s", sweep.removed, params_.spool_dir.c_str());
    }
    const Clock::time_point t1 = Clock::now();
    const TypeRatios* ratios = learn_type_ratios(snap, inputs, params_, type_speeds_);
    RoundResult result =
        plan_round(snap, inputs, params_, full || arrivals ? policy_.get() : nullptr, arrivals && !full, ratios);
    write_resize_requests(snap, result, params_.spool_dir,  // before the signals, outside the locks
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count());
    const double plan_ms = ms_since(t1);
    if (full) remember_round(started);
    if (!result.error.empty()) error("sched/pollux: %s: no size changes this round", result.error.c_str());

    EnactReport report;
    PowerReport power;
    double write_ms = 0;
    if (needs_enact(snap, result) || !result.autoscale.power_down.empty() || !result.autoscale.power_up.empty()) {
      const Clock::time_point t2 = Clock::now();
      {
        const SlurmctldLock lock(slurmctld_locks(READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK));
        report = enact(snap, result);
        power = enact_power(snap, result);
      }
      write_ms = ms_since(t2);
    }
    for (const std::string& e : report.errors) error("sched/pollux: %s", e.c_str());
    // A refusal that lasts (e.g. power saving off: Slurm refuses every
    // power down) is logged once, not every round.
    for (const std::string& e : power.errors)
      if (power_errors_.count(e) == 0) error("sched/pollux: %s", e.c_str());
    if (power.powered_down + power.powered_up > 0 || !power.errors.empty() || !result.autoscale.active)
      power_errors_ = std::set<std::string>(power.errors.begin(), power.errors.end());
    for (const std::string& line : power.lines) info("sched/pollux: %s", line.c_str());
    if (result.autoscale.active && result.autoscale.why != last_autoscale_)
      verbose("sched/pollux: autoscale: %s", result.autoscale.why.c_str());
    if (result.autoscale.active) last_autoscale_ = result.autoscale.why;
    log_refusals(snap, report);
    for (const JobDecision& d : result.decisions) {
      if (!d.note.empty()) info("sched/pollux: JobId=%u: %s", snap.jobs[d.job].job_id, d.note.c_str());
      if (d.action == Action::kNone) continue;
      const ElasticJobSnapshot& j = snap.jobs[d.job];
      // A job its QOS or association limits stop: which limit, as Slurm names it.
      const std::string limit = d.state.why == Why::kLimits && !j.no_size.empty() ? " limit=" + j.no_size : "";
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
    if (power.powered_down + power.powered_up > 0) schedule_node_save();
    if (waiting || report.released + report.requeued + report.restarted_early > 0) queue_job_scheduler();
    keep_type_speeds();  // its fsync after the decisions are enacted, not before
    if (const std::string e = boot_times_.keep(); !e.empty()) error("sched/pollux: %s", e.c_str());
    in_flight_ = boot_times_.booting() || awaits_boot(snap);
    for (const JobDecision& d : result.decisions)
      if (d.state.phase == Phase::kCheckpointing || d.state.phase == Phase::kStarting) in_flight_ = true;
    if (full)
      debug("sched/pollux: round%s: %zu elastic jobs, %zu GPU nodes, %d GPUs kept for rigid jobs; lock hold: "
            "read %.3f ms, write %.3f ms; policy %.1f ms (%lld evaluations); total %.1f ms",
            forward ? " (brought forward: a job's end freed GPUs)" : "", snap.jobs.size(), snap.nodes.size(),
            result.reserved_gpus, read_ms, write_ms, plan_ms,
            static_cast<long long>(result.report.evaluations), ms_since(t0));
    else if (arrivals)
      debug("sched/pollux: arrivals round: %zu elastic jobs; lock hold: read %.3f ms, write %.3f ms; policy %.1f ms",
            snap.jobs.size(), read_ms, write_ms, plan_ms);
    else
      debug2("sched/pollux: transition round: lock hold: read %.3f ms, write %.3f ms", read_ms, write_ms);
    stats_.add(snap, inputs, result,
               {full ? RoundKind::kPeriodic : arrivals ? RoundKind::kArrivals : RoundKind::kTransition, read_ms,
                plan_ms, ms_since(t0), write_ms > 0, write_ms, static_cast<int>(report.errors.size()),
                static_cast<int>(report.refusals.size()), hints_.take_rejections(), params_.spool_dir, spool_,
                power.powered_down, power.powered_up});
    publisher_.publish(stats_, params_);
    return full;
  }

  // Each job's refusal by Slurm is logged once per reason, and its size is
  // never proposed again (refused_sizes.h).
  void log_refusals(const Snapshot& snap, const EnactReport& report) {
    for (const EnactReport::Refusal& f : report.refusals) {
      const ElasticJobSnapshot* j = nullptr;
      for (const ElasticJobSnapshot& x : snap.jobs)
        if (x.job_id == f.job) j = &x;
      if (j == nullptr) continue;
      const std::string line = refused_.refused(*j, f.size, f.reason, f.message);
      if (!line.empty()) error("sched/pollux: %s", line.c_str());
    }
  }

  RefusedSizes refused_;
  std::string last_autoscale_;  // goodput auto-scaling's last reason, logged when it changes
  std::set<std::string> power_errors_;  // Slurm's refusals of the last power downs tried, logged once
  FreedGpus freed_;  // whether a job's end freed GPUs since the last round
  SpoolSpace spool_;  // the spool's space at the last round
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
  double started_ = 0;  // when this slurmctld started the rounds (Snapshot::loaded)
  bool remembered_ = false;  // recall_rounds() ran
  std::string memory_path_;  // <StateSaveLocation>/pollux_rounds; empty: not set
  std::string memory_error_;  // the last failure to write it, logged once
  std::string type_speeds_path_;  // <StateSaveLocation>/pollux_gpu_type_speeds; empty: not set
  std::string type_speeds_error_;  // the last failure to write it, logged once
  Params params_;
  std::unique_ptr<Policy> policy_;
  TypeSpeedLearner type_speeds_;  // the GPU types' relative speeds, learnt across rounds
  BootTimes boot_times_;  // the nodes' boot times under power saving, learnt across rounds
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

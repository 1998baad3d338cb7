// The checkpoint protocol (see checkpoint_protocol.h).
#include "checkpoint_protocol.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "checkpoint_root.h"
#include "log.h"
#include "pollux/agent_backend.h"
#include "pollux/atomic_file.h"
#include "pollux/hint_fields.h"
#include "root_message.h"

namespace pollux::agent_detail {

namespace {
constexpr std::size_t kMaxStateBytes = 16u << 20;
}  // namespace

CheckpointProtocol::CheckpointProtocol(Communicator& comm, const AgentOptions& opt, const JobEnvironment& env,
                                       std::function<AgentState()> state)
    : comm_(comm),
      opt_(opt),
      env_(env),
      state_(std::move(state)),
      rank_(comm.rank()),
      replicas_(comm.size()),
      store_(checkpoint_root(opt, env), env.restart_count) {
  schedule_periodic();
}

void CheckpointProtocol::schedule_periodic() {
  next_periodic_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(opt_.checkpoint_interval));
}

bool CheckpointProtocol::periodic_due() const {
  return opt_.checkpoint_interval > 0 && Clock::now() >= next_periodic_;
}

RootMessage CheckpointProtocol::decide(const std::function<void(RootMessage&)>& op, long long step,
                                       const char* superseded, const char* failed) {
  RootMessage m;
  if (rank_ == 0) {
    const auto refuse = [&](RootMessage::Kind kind, const char* verb, const char* reason) {
      m = RootMessage{};
      m.kind = kind;
      m.reason = reason;
      if (verb != nullptr) log(rank_, "checkpoint at step %lld %s: %s", step, verb, reason);
    };
    try {
      op(m);
    } catch (const SupersededError& e) {
      refuse(RootMessage::Kind::kSuperseded, superseded, e.what());
    } catch (const std::exception& e) {
      refuse(RootMessage::Kind::kFailed, failed, e.what());
    }
  }
  return share_from_root(comm_, rank_, m);
}

int CheckpointProtocol::every_rank(const std::function<void()>& work, const std::string& what, const char* callback) {
  bool failed = false;
  try {
    work();
  } catch (const std::exception& e) {
    failed = true;
    log(rank_, "%s failed: %s", what.c_str(), e.what());
  } catch (...) {  // the other ranks wait in the all-reduce below: never leave without them
    failed = true;
    log(rank_, "%s failed: the %s callback threw a non-standard exception", what.c_str(), callback);
  }
  double n = failed ? 1 : 0;
  comm_.start_allreduce(&n, 1);
  comm_.wait_allreduce();
  return static_cast<int>(n);
}

std::string CheckpointProtocol::take(long long step) {
  const Clock::time_point began = Clock::now();
  if (rank_ == 0) schedule_periodic();  // any checkpoint, taken or tried, restarts the interval
  const RootMessage begun =
      decide([&](RootMessage& m) { m.dir = store_.begin(step); }, step, "refused", "not taken");
  if (!begun.ok()) return "not taken: " + begun.reason;
  const std::string& dir = begun.dir;
  const int failed = every_rank(
      [&] {
        if (save_fn) save_fn(CheckpointContext{dir, rank_, replicas_, step});
        if (rank_ == 0) write_state(dir, std::chrono::duration<double>(Clock::now() - began).count());
      },
      "checkpoint at step " + std::to_string(step), "checkpoint");
  // every_rank() is also the barrier: every rank has written its part before the commit.
  if (failed > 0) {
    if (rank_ == 0) store_.abort(dir);
    return "writing it failed on " + std::to_string(failed) + " rank(s) (see their messages); the previous one stays";
  }
  const RootMessage committed = decide(
      [&](RootMessage&) {
        const std::string final_dir = store_.commit(dir);
        if (opt_.verbose >= 1) log(rank_, "checkpoint of step %lld committed: %s", step, final_dir.c_str());
      },
      step, "not committed", "failed");
  return committed.ok() ? std::string() : committed.reason;
}

// `save_seconds`: how long this checkpoint has taken so far (rank 0's part
// of it: its callback; the state's own write is small).
void CheckpointProtocol::write_state(const std::string& dir, double save_seconds) {
  AgentState s = state_();
  s.save_seconds = std::min(save_seconds, hint_fields::kMaxRestartSeconds);
  const std::string err = write_file_atomic(dir + "/" + kAgentStateFile, emit_agent_state(s));
  if (!err.empty()) throw std::runtime_error(err);
}

// Whatever is in the default directory at a job's first run is an earlier
// job's that had the same id: renamed, not removed.
void CheckpointProtocol::set_aside_earlier_job() {
  struct stat st {};
  if (::lstat(store_.root().c_str(), &st) != 0) return;
  const std::string aside = store_.root() + ".earlier-" + std::to_string(static_cast<long long>(::time(nullptr)));
  if (::rename(store_.root().c_str(), aside.c_str()) != 0)
    throw std::runtime_error("cannot set aside an earlier job's " + store_.root() + ": " + std::strerror(errno));
  log(rank_, "first run of job %u: an earlier job's checkpoints in %s moved to %s", env_.job_id,
      store_.root().c_str(), aside.c_str());
}

std::optional<CheckpointProtocol::Restored> CheckpointProtocol::restore() {
  // Rank 0 finds and reads the checkpoint; everyone gets its directory and
  // agent state (no directory: none).
  const RootMessage found = decide(
      [&](RootMessage& m) {
        if (holds_earlier_job(opt_, env_)) set_aside_earlier_job();
        store_.claim();  // this run owns the checkpoints from now on
        if (const std::optional<std::string> latest = store_.latest()) {
          const FileRead f = read_file_checked(*latest + "/" + kAgentStateFile, kMaxStateBytes);
          if (!f) throw std::runtime_error(f.error);
          m.dir = *latest;
          m.state = f.data;
        }
      },
      0, nullptr, nullptr);
  if (!found.ok()) throw std::runtime_error("restore from " + store_.root() + ": " + found.reason);
  if (found.dir.empty()) {
    if (rank_ == 0 && env_.restart_count > 0)
      log(rank_, "restart %d but no checkpoint in %s: starting from scratch", env_.restart_count,
          store_.root().c_str());
    return std::nullopt;
  }
  Restored r;
  r.dir = found.dir;
  try {
    r.state = parse_agent_state(found.state);
  } catch (const std::exception& e) {
    throw std::runtime_error(r.dir + "/" + kAgentStateFile + ": " + e.what());
  }
  const AgentState& s = r.state;
  // Slurm's restart count never goes down within a job: a checkpoint of a
  // later restart than this one was left by an earlier job with the same id
  // (ids start again when slurmctld's state is wiped). Resuming from it, or
  // checkpointing beside it, would mix two trainings.
  if (env_.job_id != 0 && s.job_id == env_.job_id && s.restart_count > env_.restart_count)
    throw std::runtime_error(r.dir + " was written at restart " + std::to_string(s.restart_count) + " of job " +
                             std::to_string(s.job_id) + ", but this job is at restart " +
                             std::to_string(env_.restart_count) + ": it belongs to an earlier job with the same id; "
                             "move " + store_.root() + " away or set POLLUX_CHECKPOINT_DIR");
  const int failed = every_rank(
      [&] {
        if (load_fn) load_fn(CheckpointContext{r.dir, rank_, replicas_, s.step});
      },
      "restore from " + r.dir, "restore");
  if (failed > 0)
    throw std::runtime_error("restore from " + r.dir + " failed on " + std::to_string(failed) + " rank(s)");
  return r;
}

}  // namespace pollux::agent_detail

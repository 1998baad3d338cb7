// The agent in one process (no MPI): the step protocol, the gradient-noise
// estimate on one replica (two-step fallback and accumulation), the
// resize protocol, checkpoint/restore, and kill -9 during a checkpoint.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include "agent_state.h"
#include "spool_test_util.h"
#include "pollux/agent.h"
#include "pollux/agent_backend.h"
#include "pollux/agent_c.h"
#include "pollux/checkpoint_store.h"
#include "pollux/hint.h"
#include "pollux/resize_decision.h"

namespace pollux {
namespace {

using test::slurp;
using test::TempDir;
using test::write_text;

AgentOptions options(const TempDir& dir) {
  AgentOptions o;
  o.limits = BatchLimits{64, 4096, 1, 1 << 16, true};
  o.checkpoint_dir = dir / "ckpt";
  o.spool_dir = dir.path();
  o.verbose = 0;
  o.adapt = false;
  return o;
}

// An agent that fits its model and adapts from its first steps.
AgentOptions fitting_options(const TempDir& dir) {
  AgentOptions o = options(dir);
  o.adapt = true;
  o.min_profile_steps = 3;
  o.warmup_steps = 0;
  return o;
}

// One optimizer step with synthetic micro-gradients g + sqrt(sigma2/m) z.
void noisy_step(Agent& a, std::vector<double>& grad, std::mt19937_64& rng, double g, double sigma2) {
  std::normal_distribution<double> normal;
  const double scale = std::sqrt(sigma2 / a.atomic_batch());
  for (int k = 0; k <= a.accum_steps(); ++k) {
    a.micro_step_begin();
    for (double& x : grad) x = g + scale * normal(rng);
    a.micro_step_end({grad.data(), grad.size(), DType::kFloat64});
  }
  GradientBuffer buf{grad.data(), grad.size(), DType::kFloat64};
  a.synchronize(buf);
  a.step_end();
}

TEST(LocalAgent, RejectsMisuseOfTheStepProtocol) {
  TempDir dir;
  auto a = make_local_agent(options(dir));
  std::vector<float> g(10, 1.0f);
  GradientBuffer buf{g.data(), g.size(), DType::kFloat32};
  EXPECT_THROW(a->micro_step_end(buf), std::logic_error);
  EXPECT_THROW(a->synchronize(buf), std::logic_error);  // no micro-step yet
  EXPECT_THROW(a->step_end(), std::logic_error);
  a->micro_step_begin();
  EXPECT_THROW(a->micro_step_begin(), std::logic_error);
  a->micro_step_end(buf);
  GradientBuffer half{g.data(), g.size(), DType::kFloat16};
  a->synchronize(buf);
  EXPECT_THROW(a->micro_step_begin(), std::logic_error);  // step_end() first
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  EXPECT_EQ(a->step(), 1);
  EXPECT_THROW(a->set_batch_config(0, 0), std::invalid_argument);  // below m_min
  a->micro_step_begin();
  EXPECT_THROW(a->set_batch_config(16, 0), std::logic_error);  // inside a step
  EXPECT_THROW(a->micro_step_end(half), std::invalid_argument);  // CPU: float/double only
}

struct NoiseCase {
  int atomic;
  int accum;
};

class LocalNoise : public ::testing::TestWithParam<NoiseCase> {};

// |g|^2 = d g^2 and tr(Sigma) at M0 = d sigma2 / M0 are known exactly.
TEST_P(LocalNoise, EstimateIsWithinTenPercent) {
  TempDir dir;
  auto a = make_local_agent(options(dir));
  a->set_batch_config(GetParam().atomic, GetParam().accum);
  const int d = 3000;
  const double g = 0.05, sigma2 = 0.5;
  std::vector<double> grad(d);
  std::mt19937_64 rng(5);
  for (int t = 0; t < 400; ++t) noisy_step(*a, grad, rng, g, sigma2);
  const auto est = a->grad_stats();
  ASSERT_TRUE(est);
  const double true_sqr = d * g * g, true_var = d * sigma2 / 64;
  EXPECT_NEAR(est->sqr / true_sqr, 1.0, 0.10) << "sqr " << est->sqr << " vs " << true_sqr;
  EXPECT_NEAR(est->var / true_var, 1.0, 0.10) << "var " << est->var << " vs " << true_var;
  // The AdaScale gain follows from them.
  const double want = adascale_gain(GradStats{true_sqr, true_var}, double(a->total_batch()), 64);
  EXPECT_NEAR(a->lr_gain() / want, 1.0, 0.10);
}

INSTANTIATE_TEST_SUITE_P(OneReplica, LocalNoise,
                         ::testing::Values(NoiseCase{64, 0},     // two-step fallback
                                           NoiseCase{32, 3}),    // accumulation: 4 micro-gradients
                         [](const auto& info) {
                           return "atomic" + std::to_string(info.param.atomic) + "_accum" + std::to_string(info.param.accum);
                         });

// The application's "model": a counter saved by the checkpoint callback.
struct App {
  long long model_step = 0;
  void attach(Agent& a) {
    a.on_checkpoint([this](const CheckpointContext& c) { write_text(c.dir + "/model", std::to_string(model_step)); });
    a.on_restore([this](const CheckpointContext& c) { model_step = std::stoll(slurp(c.dir + "/model")); });
  }
};

// A new agent with `app` attached.
std::unique_ptr<Agent> attached(const AgentOptions& o, App& app) {
  auto a = make_local_agent(o);
  app.attach(*a);
  return a;
}

// A new agent (a restarted job) with `app` attached, restored from the
// latest checkpoint; null when there was none.
std::unique_ptr<Agent> restored(const AgentOptions& o, App& app) {
  auto a = attached(o, app);
  return a->restore() ? std::move(a) : nullptr;
}

void plain_step(Agent& a, App& app, std::vector<float>& grad) {
  for (int k = 0; k <= a.accum_steps(); ++k) {
    a.micro_step_begin();
    a.micro_step_end({grad.data(), grad.size(), DType::kFloat32});
  }
  GradientBuffer buf{grad.data(), grad.size(), DType::kFloat32};
  a.synchronize(buf);
  ++app.model_step;
}

// A Slurm job's environment for the test's lifetime: its id, and its
// restart count once restart() sets one.
class SlurmJob {
 public:
  explicit SlurmJob(const char* id) : id_(static_cast<std::uint32_t>(std::stoul(id))) { ::setenv("SLURM_JOB_ID", id, 1); }
  ~SlurmJob() {
    ::unsetenv("SLURM_JOB_ID");
    ::unsetenv("SLURM_RESTART_COUNT");
  }
  void restart(int count) {
    restarts_ = count;
    ::setenv("SLURM_RESTART_COUNT", std::to_string(count).c_str(), 1);
  }
  // What sched/pollux does for a resize: its decision into the spool, then
  // the signal (to this thread; the agent's handler is process-wide).
  void request_resize(const std::string& spool) {
    decide(spool, false);
    ::raise(SIGUSR1);
  }
  // What sched/pollux does when it calls a signalled resize off: a cancel
  // into the spool, no signal. Returns its time.
  long long cancel_resize(const std::string& spool) { return decide(spool, true); }

 private:
  long long decide(const std::string& spool, bool cancel) {
    static std::atomic<long long> last{0};
    const long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
    long long ms = last.load();
    ms = std::max(ms + 1, now);
    last = ms;
    EXPECT_EQ(write_resize_decision(spool, id_, ResizeDecision{restarts_, ms, cancel}), "");
    return ms;
  }

  std::uint32_t id_;
  int restarts_ = 0;
};

// Waits (at most 20 s) until the job's hint acknowledges a checkpoint.
bool wait_for_ack(const std::string& hint, std::uint32_t job) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < give_up) {
    const HintResult h = read_hint_file(hint, ::getuid(), job);
    if (h && h.hint->checkpoint && h.hint->checkpoint->ready_for_requeue) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// The agent's last hint: the background thread writes the others when it
// gets to them (a fresh-clone run read no hint file at all right after a
// step), the destructor this one before it returns.
HintResult last_hint(std::unique_ptr<Agent>& a, std::uint32_t job) {
  const std::string file = a->hint_file();
  a.reset();
  return read_hint_file(file, ::getuid(), job);
}

// `n` whole optimizer steps.
void run_steps(Agent& a, App& app, std::vector<float>& grad, int n) {
  for (int t = 0; t < n; ++t) {
    plain_step(a, app, grad);
    a.step_end();
  }
}

TEST(ExternalAgent, KeepsTheModesApartAndRejectsBadNorms) {
  TempDir dir;
  auto ext = make_external_agent(nullptr, options(dir));
  auto buf_agent = make_local_agent(options(dir));
  std::vector<float> g(10, 1.0f);
  GradientBuffer buf{g.data(), g.size(), DType::kFloat32};
  EXPECT_TRUE(ext->external());
  EXPECT_FALSE(buf_agent->external());
  buf_agent->micro_step_begin();
  EXPECT_THROW(buf_agent->micro_step_end(), std::logic_error);
  buf_agent->micro_step_end(buf);
  EXPECT_THROW(buf_agent->synchronized(GradientNorms{}), std::logic_error);

  ext->micro_step_begin();
  EXPECT_THROW(ext->micro_step_end(buf), std::logic_error);
  ext->micro_step_end();
  EXPECT_THROW(ext->synchronize(buf), std::logic_error);
  GradientNorms bad;
  bad.local_sqr = std::nan("");
  EXPECT_THROW(ext->synchronized(bad), std::invalid_argument);
  bad.local_sqr = 1;
  bad.local_grads = 5;  // neither 1 nor accum_steps() + 1
  EXPECT_THROW(ext->synchronized(bad), std::invalid_argument);
  bad.local_grads = 1;
  ext->synchronized(bad);
  ext->step_end();
  EXPECT_EQ(ext->step(), 1);
  EXPECT_EQ(ext->samples_seen(), ext->total_batch());
}

// One replica in the framework-neutral mode: the application keeps and
// compares the averaged gradients of step pairs when two_step_phase() asks,
// and the estimate matches the known noise as in the buffer mode.
TEST(ExternalAgent, OneReplicaPairsStepsAsAsked) {
  TempDir dir;
  auto a = make_external_agent(nullptr, options(dir));
  a->set_batch_config(16, 1);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  const double g = 0.05, sigma2 = 0.5;
  std::vector<double> grad(2000), kept;
  double kept_sqr = 0;
  for (int t = 0; t < 400; ++t) {
    std::fill(grad.begin(), grad.end(), 0.0);
    const double scale = std::sqrt(sigma2 / a->atomic_batch());
    for (int k = 0; k <= a->accum_steps(); ++k) {
      a->micro_step_begin();
      for (double& x : grad) x += (g + scale * normal(rng)) / (a->accum_steps() + 1);
      a->micro_step_end();
    }
    GradientNorms n;
    for (double x : grad) n.local_sqr += x * x;
    n.sync_sqr = n.local_sqr;
    if (a->two_step_phase() == TwoStep::kKeep) {
      kept = grad;
      kept_sqr = n.sync_sqr;
    } else {
      ASSERT_EQ(a->two_step_phase(), TwoStep::kCompare);
      n.has_prev = !kept.empty();
      n.prev_sqr = kept_sqr;
      for (std::size_t i = 0; i < kept.size(); ++i) n.dot_prev += kept[i] * grad[i];
    }
    a->synchronized(n);
    a->step_end();
  }
  const auto est = a->grad_stats();
  ASSERT_TRUE(est);
  EXPECT_NEAR(est->sqr / (2000 * g * g), 1.0, 0.1);
  EXPECT_NEAR(est->var / (2000 * sigma2 / 64), 1.0, 0.1);
}

// synchronized_late(): the application's own record of the previous step
// feeds the profile and the statistics; a skipped step adds no progress and
// no statistics; non-finite norms are dropped, not an error.
TEST(ExternalAgent, LateRecordsAndSkippedSteps) {
  TempDir dir;
  auto a = make_external_agent(nullptr, options(dir));
  a->set_batch_config(16, 0);
  std::optional<StepMeasurement> prev;
  for (int t = 0; t < 12; ++t) {
    a->micro_step_begin();
    a->micro_step_end();
    const bool skip = t == 6;
    const bool compare = a->two_step_phase() == TwoStep::kCompare;  // one replica: pairs of steps
    a->synchronized_late(prev ? &*prev : nullptr, skip);
    const double progress = a->progress(), gain = a->lr_gain();
    a->step_end();
    EXPECT_DOUBLE_EQ(a->progress(), skip ? progress : progress + gain) << t;
    StepMeasurement m;
    m.norms.local_sqr = m.norms.sync_sqr = t == 8 ? std::nan("") : 1.0 + 0.1 * t;
    m.norms.has_prev = compare;
    m.norms.prev_sqr = 1.0;
    m.norms.dot_prev = 0.5;
    m.grad_time_sum = 0.25;
    m.micro_steps = 1;
    m.step_time = 0.25;
    prev = m;
  }
  EXPECT_EQ(a->samples_seen(), 12 * 16);
  EXPECT_EQ(a->step(), 12);
  ASSERT_EQ(a->profile().size(), 1u);
  EXPECT_DOUBLE_EQ(a->profile()[0].grad_time, 0.25);  // the reported time, not the agent's clock
  const auto est = a->grad_stats();
  ASSERT_TRUE(est);
  EXPECT_TRUE(std::isfinite(est->sqr) && std::isfinite(est->var));
}

TEST(LocalAgent, RestoreResumesTheExactStep) {
  TempDir dir;
  std::vector<float> grad(100, 0.5f);
  long long step = 0, samples = 0;
  double progress = 0;
  {
    App app;
    auto a = attached(options(dir), app);
    EXPECT_FALSE(a->restore());
    a->set_batch_config(16, 1);
    run_steps(*a, app, grad, 30);
    a->checkpoint();
    step = a->step();
    samples = a->samples_seen();
    progress = a->progress();
    run_steps(*a, app, grad, 7);  // not checkpointed: lost with the process
  }
  App app;
  auto b = restored(options(dir), app);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->step(), step);
  EXPECT_EQ(app.model_step, step);
  EXPECT_EQ(b->samples_seen(), samples);
  EXPECT_EQ(b->progress(), progress);
  // Re-picked for this allocation (no model: M0 on one replica).
  EXPECT_EQ(b->atomic_batch(), 64);
  EXPECT_EQ(b->accum_steps(), 0);
}

// Job ids start again when slurmctld's state is wiped: a checkpoint from a
// later restart of "the same" job id is an earlier job's, and is refused.
TEST(LocalAgent, RefusesACheckpointOfAnEarlierJobWithTheSameId) {
  TempDir dir;
  std::vector<float> grad(100, 0.5f);
  SlurmJob job("4242");
  job.restart(2);
  {
    App app;
    auto a = attached(options(dir), app);
    plain_step(*a, app, grad);
    a->step_end();
    a->checkpoint();
  }
  job.restart(3);  // the same job, requeued: resumes
  {
    App app;
    EXPECT_TRUE(restored(options(dir), app));
    EXPECT_EQ(app.model_step, 1);
  }
  job.restart(0);  // a new job that got the same id
  App app;
  auto b = attached(options(dir), app);
  try {
    b->restore();
    ADD_FAILURE() << "restored a checkpoint of an earlier job";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("earlier job with the same id"), std::string::npos) << e.what();
  }
  EXPECT_EQ(app.model_step, 0);
}

// Without a directory given, a job's checkpoints go under $HOME (not the
// submit directory), keyed by cluster and job id; a requeued run finds
// them, and a first run (a new job that got the id) sets them aside.
TEST(LocalAgent, TheDefaultDirectoryIsTheJobsAndAFirstRunSetsAsideAnEarlierJobs) {
  TempDir dir;
  std::vector<float> grad(100, 0.5f);
  const char* old_home = std::getenv("HOME");
  const std::string saved_home = old_home != nullptr ? old_home : "";
  ::setenv("HOME", dir.path().c_str(), 1);
  ::setenv("SLURM_CLUSTER_NAME", "c1", 1);
  ::setenv("SLURM_CONF", (dir / "no-slurm.conf").c_str(), 1);  // no StateSaveLocation to key by: the name alone
  ::unsetenv("POLLUX_CHECKPOINT_DIR");
  AgentOptions o = options(dir);
  o.checkpoint_dir.clear();
  SlurmJob job("4343");
  const std::string root = dir / ".cache/pollux/checkpoints/c1/4343";
  EXPECT_EQ(checkpoint_root(o, JobEnvironment::from_environment()), root);
  job.restart(0);
  {
    App app;
    auto a = attached(o, app);
    EXPECT_FALSE(a->restore());
    plain_step(*a, app, grad);
    a->step_end();
    a->checkpoint();
  }
  job.restart(1);  // requeued: the same directory
  EXPECT_TRUE(checkpoint_waiting(o));
  {
    App app;
    EXPECT_TRUE(restored(o, app));
    EXPECT_EQ(app.model_step, 1);
  }
  job.restart(0);  // a new job with the same id starts afresh
  EXPECT_FALSE(checkpoint_waiting(o));
  App app;
  auto b = attached(o, app);
  EXPECT_FALSE(b->restore());
  EXPECT_EQ(app.model_step, 0);
  int aside = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / ".cache/pollux/checkpoints/c1"))
    aside += e.path().filename().string().rfind("4343.earlier-", 0) == 0;
  EXPECT_EQ(aside, 1);
  ::unsetenv("SLURM_CLUSTER_NAME");
  ::unsetenv("SLURM_CONF");
  if (old_home != nullptr) ::setenv("HOME", saved_home.c_str(), 1);
  else ::unsetenv("HOME");
}

// Two clusters of one name (every local cluster is "pollux") whose users
// share a home: the same job id on the other cluster neither resumes this
// one's checkpoints nor sets them aside as an earlier job's. The default
// directory is keyed by slurm.conf's StateSaveLocation too; a job whose
// earlier runs wrote under the name alone (before the key) still finds them.
TEST(LocalAgent, TwoClustersOfOneNameDoNotShareCheckpoints) {
  TempDir dir;
  std::vector<float> grad(100, 0.5f);
  const char* old_home = std::getenv("HOME");
  const std::string saved_home = old_home != nullptr ? old_home : "";
  ::setenv("HOME", dir.path().c_str(), 1);
  ::setenv("SLURM_CLUSTER_NAME", "pollux", 1);
  ::unsetenv("POLLUX_CHECKPOINT_DIR");
  const auto conf = [&](const std::string& name, const std::string& state) {
    const std::string path = dir / (name + ".conf");
    std::ofstream(path) << "ClusterName=pollux\nSlurmctldPort=6817\n# StateSaveLocation=/not/this\n"
                        << "StateSaveLocation=" << state << "\n";
    return path;
  };
  const std::string conf_a = conf("a", "/tmp/cluster-a/state"), conf_b = conf("b", "/tmp/cluster-b/state");
  AgentOptions o = options(dir);
  o.checkpoint_dir.clear();
  SlurmJob job("5");
  // A run of job 5 on one cluster: the steps it restored; it trains `steps` more and checkpoints.
  const auto steps_restored = [&](const std::string& slurm_conf, int restart, int steps) {
    ::setenv("SLURM_CONF", slurm_conf.c_str(), 1);
    job.restart(restart);
    App app;
    auto a = attached(o, app);
    a->restore();
    const long long restored = app.model_step;
    for (int i = 0; i < steps; ++i) {
      plain_step(*a, app, grad);
      a->step_end();
    }
    a->checkpoint();
    return restored;
  };
  ::setenv("SLURM_CONF", conf_a.c_str(), 1);
  const std::string root_a = checkpoint_root(o, JobEnvironment::from_environment());
  ::setenv("SLURM_CONF", conf_b.c_str(), 1);
  const std::string root_b = checkpoint_root(o, JobEnvironment::from_environment());
  EXPECT_NE(root_a, root_b);
  EXPECT_EQ(root_a.rfind(dir / ".cache/pollux/checkpoints/pollux-", 0), 0u) << root_a;
  EXPECT_EQ(root_a.substr(root_a.size() - 2), "/5") << root_a;
  EXPECT_EQ(steps_restored(conf_a, 0, 3), 0);  // job 5 on cluster a: step 3 checkpointed
  EXPECT_EQ(steps_restored(conf_b, 0, 1), 0);  // job 5 on cluster b: its own first run, step 1
  EXPECT_EQ(steps_restored(conf_a, 1, 1), 3);  // cluster a's job 5, requeued, resumes its own step 3
  EXPECT_EQ(steps_restored(conf_b, 1, 1), 1);
  for (const auto& e : std::filesystem::directory_iterator(dir / ".cache/pollux/checkpoints"))
    EXPECT_EQ(e.path().filename().string().find(".earlier-"), std::string::npos) << e.path();

  // Compatibility: job 6's first run wrote under the name alone; requeued
  // where slurm.conf names StateSaveLocation, it resumes from there.
  SlurmJob old_job("6");
  ::setenv("SLURM_CONF", (dir / "no-slurm.conf").c_str(), 1);
  old_job.restart(0);
  {
    App app;
    auto a = attached(o, app);
    a->restore();
    plain_step(*a, app, grad);
    a->step_end();
    a->checkpoint();
  }
  ::setenv("SLURM_CONF", conf_a.c_str(), 1);
  old_job.restart(1);
  EXPECT_EQ(checkpoint_root(o, JobEnvironment::from_environment()), dir / ".cache/pollux/checkpoints/pollux/6");
  EXPECT_TRUE(checkpoint_waiting(o));
  {
    App app;
    EXPECT_TRUE(restored(o, app));
    EXPECT_EQ(app.model_step, 1);
  }
  ::unsetenv("SLURM_CLUSTER_NAME");
  ::unsetenv("SLURM_CONF");
  if (old_home != nullptr) ::setenv("HOME", saved_home.c_str(), 1);
  else ::unsetenv("HOME");
}

// A node cut off, not dead: Slurm requeues the job (restart 1) while the
// old run (restart 0) still trains. Once the new run has restored, the old
// one can no longer commit, and is told to stop on every checkpoint.
TEST(LocalAgent, ASupersededRunCannotCommitAndIsToldToStop) {
  TempDir dir;
  std::vector<float> grad(10, 0.5f);
  SlurmJob job("77");
  job.restart(0);
  App old_app;
  auto old_run = attached(options(dir), old_app);
  EXPECT_FALSE(old_run->restore());
  run_steps(*old_run, old_app, grad, 3);
  old_run->checkpoint();  // step 3

  job.restart(1);
  App new_app;
  auto new_run = restored(options(dir), new_app);
  ASSERT_TRUE(new_run);
  EXPECT_EQ(new_app.model_step, 3);

  plain_step(*old_run, old_app, grad);  // the old run goes on ...
  old_run->step_end();
  try {
    old_run->checkpoint();
    ADD_FAILURE() << "a superseded run committed a checkpoint";
  } catch (const SupersededError& e) {
    EXPECT_NE(std::string(e.what()).find("superseded"), std::string::npos) << e.what();
  }
  plain_step(*new_run, new_app, grad);  // ... while the new run's checkpoints go on
  new_run->step_end();
  new_run->checkpoint();
  App check;
  auto c = restored(options(dir), check);  // (a third run, restart 1 still)
  ASSERT_TRUE(c);
  EXPECT_EQ(c->step(), 4);
  EXPECT_EQ(check.model_step, 4);
}

// The training loop learns it from step_end() too: a superseded run's
// periodic checkpoint throws SupersededError and commits nothing.
TEST(LocalAgent, ASupersededRunStopsAtItsNextPeriodicCheckpoint) {
  TempDir dir;
  std::vector<float> grad(10, 0.5f);
  SlurmJob job("78");
  job.restart(0);
  AgentOptions o = options(dir);
  o.checkpoint_interval = 0.05;
  App old_app;
  auto old_run = attached(o, old_app);
  EXPECT_FALSE(old_run->restore());
  job.restart(1);
  App new_app;
  EXPECT_FALSE(attached(options(dir), new_app)->restore());  // claims the directory
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  plain_step(*old_run, old_app, grad);
  EXPECT_THROW(old_run->step_end(), SupersededError);
  EXPECT_EQ(CheckpointStore(dir / "ckpt").latest(), std::nullopt) << "the superseded run committed";
}

// The agent checkpoints by itself every checkpoint_interval seconds, at a
// step boundary, without the application asking; any checkpoint restarts
// the interval.
TEST(LocalAgent, PeriodicCheckpointsNeedNoCallFromTheApplication) {
  TempDir dir;
  std::vector<float> grad(10, 0.5f);
  AgentOptions o = options(dir);
  o.checkpoint_interval = 0.2;
  {
    App app;
    auto a = attached(o, app);
    EXPECT_FALSE(a->restore());
    run_steps(*a, app, grad, 5);  // well inside the first interval
    App none;
    EXPECT_FALSE(restored(options(dir), none)) << "checkpointed before the interval passed";
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    plain_step(*a, app, grad);  // the interval has passed: this step ends with a checkpoint
    a->step_end();
    run_steps(*a, app, grad, 3);  // not checkpointed: within the next interval
  }
  App app;
  auto b = restored(options(dir), app);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->step(), 6);
  EXPECT_EQ(app.model_step, 6);
}

TEST(LocalAgent, AFailingCheckpointCallbackCommitsNothing) {
  TempDir dir;
  App app;
  auto a = attached(options(dir), app);
  std::vector<float> grad(10, 0.5f);
  plain_step(*a, app, grad);
  a->step_end();
  a->checkpoint();
  a->on_checkpoint([](const CheckpointContext&) { throw std::runtime_error("disk full"); });
  plain_step(*a, app, grad);
  a->step_end();
  try {
    a->checkpoint();
    ADD_FAILURE() << "a failed checkpoint was reported as taken";
  } catch (const std::runtime_error& e) {  // why, on every rank
    EXPECT_NE(std::string(e.what()).find("failed on 1 rank(s)"), std::string::npos) << e.what();
  }
  App app2;
  auto b = restored(options(dir), app2);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->step(), 1);
}

// A callback may throw anything: on every rank the agent reports an
// ordinary failure (a non-standard exception escaping one rank would leave
// the others waiting for it in the failure count).
TEST(LocalAgent, ANonStandardExceptionFromACallbackIsAnOrdinaryFailure) {
  TempDir dir;
  std::vector<float> grad(10, 0.5f);
  {
    App app;
    auto a = attached(options(dir), app);
    run_steps(*a, app, grad, 1);
    a->checkpoint();
    a->on_checkpoint([](const CheckpointContext&) { throw 42; });
    run_steps(*a, app, grad, 1);
    EXPECT_THROW(a->checkpoint(), std::runtime_error);
  }
  auto b = make_local_agent(options(dir));
  struct NotAnException {};
  b->on_restore([](const CheckpointContext&) { throw NotAnException{}; });
  try {
    b->restore();
    ADD_FAILURE() << "restored although the callback threw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("failed on 1 rank(s)"), std::string::npos) << e.what();
  }
  App app;
  auto c = restored(options(dir), app);  // the failed checkpoint replaced nothing
  ASSERT_TRUE(c);
  EXPECT_EQ(c->step(), 1);
}

// The agent ends the process for a requeue (RequeueMode::kExit).
AgentOptions exit_mode_options(const TempDir& dir) {
  AgentOptions o = options(dir);
  o.requeue_mode = RequeueMode::kExit;
  return o;
}

TEST(LocalAgent, ResizeSignalCheckpointsAcknowledgesWaitsAndResumes) {
  TempDir dir;
  SlurmJob job("9001");
  AgentOptions o = options(dir);
  o.requeue_wait = 0.3;
  App app;
  auto a = attached(o, app);
  // The program's last word before the requeue ends it (its logs): once
  // the checkpoint is committed, before it is acknowledged in the hint.
  int requeue_calls = 0;
  bool committed_before = false, acked_before = true;
  a->on_requeue([&] {
    ++requeue_calls;
    committed_before = CheckpointStore(dir / "ckpt", 0).latest().has_value();
    const HintResult h = read_hint_file(a->hint_file(), ::getuid(), 9001);
    acked_before = h && h.hint->checkpoint && h.hint->checkpoint->ready_for_requeue;
  });
  std::vector<float> grad(10, 0.5f);
  run_steps(*a, app, grad, 5);
  ASSERT_EQ(a->hint_file(), dir / "9001.hint.yaml");
  plain_step(*a, app, grad);
  job.request_resize(dir.path());  // as sched/pollux would
  // The signal is seen at the next synchronize(), acted on at its step_end().
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  EXPECT_EQ(requeue_calls, 0);
  plain_step(*a, app, grad);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  EXPECT_EQ(requeue_calls, 1);
  EXPECT_TRUE(committed_before);
  EXPECT_FALSE(acked_before);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.3);
  // After the wait the acknowledgement is withdrawn, the checkpoint stays.
  const HintResult h = read_hint_file(a->hint_file(), ::getuid(), 9001);
  ASSERT_TRUE(h) << h.error;
  ASSERT_TRUE(h.hint->checkpoint);
  EXPECT_EQ(h.hint->checkpoint->step, 7);
  EXPECT_FALSE(h.hint->checkpoint->ready_for_requeue);
  EXPECT_EQ(app.model_step, 7);
  App app2;
  auto b = restored(o, app2);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->step(), 7);
  EXPECT_EQ(app2.model_step, 7);
}

// The acknowledgement travels in the hint: when the hint cannot be written
// (a full or read-only spool), the agent says so rather than claim it
// (found by the soak: "checkpoint acknowledged in the hint" was logged).
TEST(LocalAgent, AnAcknowledgementThatCannotBeWrittenIsReportedAsSuch) {
  TempDir dir;
  SlurmJob job("9010");
  AgentOptions o = options(dir);
  // A directory (not empty) where the hint goes: no rename can replace it;
  // sched/pollux's decision still reaches the spool.
  ASSERT_EQ(::mkdir((dir / "9010.hint.yaml").c_str(), 0755), 0);
  write_text(dir / "9010.hint.yaml/x", "");
  o.requeue_wait = 0.05;
  o.verbose = 1;
  App app;
  auto a = attached(o, app);
  std::vector<float> grad(10, 0.5f);
  plain_step(*a, app, grad);
  job.request_resize(dir.path());
  testing::internal::CaptureStderr();
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  plain_step(*a, app, grad);
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("checkpoint of step 2 committed, but its acknowledgement could not be written"),
            std::string::npos) << err;
  EXPECT_EQ(err.find("checkpoint acknowledged in the hint"), std::string::npos) << err;
}

TEST(LocalAgent, ResizeInExitModeAcknowledgesAndTellsTheLoopToExit) {
  TempDir dir;
  SlurmJob job("9002");
  const AgentOptions o = exit_mode_options(dir);
  App app;
  auto a = attached(o, app);
  std::vector<float> grad(10, 0.5f);
  plain_step(*a, app, grad);
  job.request_resize(dir.path());
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  int requeue_calls = 0;
  a->on_requeue([&] {
    ++requeue_calls;
    throw std::runtime_error("a failing hook does not stop the resize");
  });
  plain_step(*a, app, grad);
  EXPECT_EQ(a->step_end(), StepAction::kRequeueExit);
  EXPECT_EQ(requeue_calls, 1);
  EXPECT_EQ(a->options().requeue_exit_code, 75);
  App app2;
  auto b = restored(o, app2);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->step(), 2);
}

// sched/pollux signals a job once per resize, but the ranks get the signal
// a little apart: a copy that reaches a rank after its synchronize(), or
// during the checkpoint, is answered by that checkpoint. One burst, one
// checkpoint.
TEST(LocalAgent, ABurstOfResizeSignalsMakesOneCheckpoint) {
  TempDir dir;
  SlurmJob job("9006");
  AgentOptions o = options(dir);
  o.requeue_wait = 0.05;
  App app;
  auto a = attached(o, app);
  int checkpoints = 0;
  a->on_checkpoint([&](const CheckpointContext& c) {
    if (++checkpoints == 1) ::raise(SIGUSR1);  // a copy that arrives during the checkpoint
    write_text(c.dir + "/model", std::to_string(app.model_step));
  });
  std::vector<float> grad(10, 0.5f);
  job.request_resize(dir.path());  // before this step's synchronize() ...
  plain_step(*a, app, grad);
  ::raise(SIGUSR1);  // ... and a copy after it
  a->step_end();
  EXPECT_EQ(checkpoints, 1);
  run_steps(*a, app, grad, 3);
  EXPECT_EQ(checkpoints, 1) << "one burst of signals made more than one checkpoint";
}

// A request during the wait for the requeue (sched/pollux called the
// resize off and decided another) is answered at once by the same
// checkpoint, acknowledged again: sched/pollux requeues on an
// acknowledgement newer than its request.
TEST(LocalAgent, ARequestDuringTheWaitForTheRequeueIsAcknowledgedAgain) {
  TempDir dir;
  SlurmJob job("9007");
  AgentOptions o = options(dir);
  o.requeue_wait = 0.5;
  App app;
  auto a = attached(o, app);
  int checkpoints = 0;
  a->on_checkpoint([&](const CheckpointContext& c) {
    ++checkpoints;
    write_text(c.dir + "/model", std::to_string(app.model_step));
  });
  std::vector<float> grad(10, 0.5f);
  job.request_resize(dir.path());
  plain_step(*a, app, grad);
  // Signals once the acknowledgement is in the hint, i.e. during the wait.
  double second_request = 0, second_ack = 0;
  std::thread scheduler([&] {
    ASSERT_TRUE(wait_for_ack(dir / "9007.hint.yaml", 9007));
    second_request = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    job.request_resize(dir.path());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < give_up && second_ack == 0) {
      const HintResult h = read_hint_file(dir / "9007.hint.yaml", ::getuid(), 9007);
      if (h && h.hint->checkpoint && h.hint->checkpoint->ready_for_requeue && h.hint->checkpoint->time >= second_request)
        second_ack = h.hint->checkpoint->time;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  a->step_end();  // checkpoint, acknowledgement, wait, acknowledgement again, wait, resume
  scheduler.join();
  EXPECT_GT(second_ack, 0) << "the request during the wait was not acknowledged";
  EXPECT_EQ(checkpoints, 1);
  plain_step(*a, app, grad);
  a->step_end();
  EXPECT_EQ(checkpoints, 1) << "the request answered during the wait was acted on again";
}

// Outside Slurm (no decision file: every delivery is a request, resizes by
// hand) a request that comes during the wait is acted on after it.
TEST(LocalAgent, AHandDrivenRequestDuringTheWaitIsActedOnAfterIt) {
  TempDir dir;
  AgentOptions o = options(dir);
  o.requeue_wait = 0.05;
  App app;
  auto a = attached(o, app);
  int checkpoints = 0;
  a->on_checkpoint([&](const CheckpointContext& c) {
    ++checkpoints;
    write_text(c.dir + "/model", std::to_string(app.model_step));
  });
  a->on_requeue([&] {
    if (checkpoints == 1) ::raise(SIGUSR1);  // the second request, as the wait begins
  });
  std::vector<float> grad(10, 0.5f);
  ::raise(SIGUSR1);
  plain_step(*a, app, grad);
  a->step_end();  // checkpoint, wait, resume
  EXPECT_EQ(checkpoints, 1);
  plain_step(*a, app, grad);
  a->step_end();
  EXPECT_EQ(checkpoints, 2) << "the request during the wait was lost";
}

// sched/pollux calls a signalled resize off (the job's size is wanted
// again) while the agent waits for the requeue: training resumes at once,
// not after the requeue wait (found in pollux-demo --cloud: a job idle for
// its whole 300 s wait after a cancel), and the acknowledgement is withdrawn.
TEST(LocalAgent, ACancelDuringTheWaitForTheRequeueResumesAtOnce) {
  TempDir dir;
  SlurmJob job("9011");
  AgentOptions o = options(dir);
  o.requeue_wait = 60;
  App app;
  auto a = attached(o, app);
  std::vector<float> grad(10, 0.5f);
  job.request_resize(dir.path());
  plain_step(*a, app, grad);
  std::thread scheduler([&] {
    ASSERT_TRUE(wait_for_ack(dir / "9011.hint.yaml", 9011));
    job.cancel_resize(dir.path());
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  scheduler.join();
  EXPECT_LT(waited, 10) << "the cancel did not end the requeue wait";
  const HintResult h = read_hint_file(a->hint_file(), ::getuid(), 9011);
  ASSERT_TRUE(h) << h.error;
  ASSERT_TRUE(h.hint->checkpoint);
  EXPECT_FALSE(h.hint->checkpoint->ready_for_requeue);
  run_steps(*a, app, grad, 2);
  EXPECT_EQ(app.model_step, 3);
}

// Called off while the agent checkpoints: no acknowledgement, no requeue
// callback, training goes on (the checkpoint stays, an ordinary one).
TEST(LocalAgent, ACancelDuringTheCheckpointMeansNoAcknowledgement) {
  TempDir dir;
  SlurmJob job("9012");
  AgentOptions o = options(dir);
  o.requeue_wait = 60;
  App app;
  auto a = attached(o, app);
  int requeue_calls = 0;
  a->on_requeue([&] { ++requeue_calls; });
  a->on_checkpoint([&](const CheckpointContext& c) {
    write_text(c.dir + "/model", std::to_string(app.model_step));
    job.cancel_resize(dir.path());
  });
  std::vector<float> grad(10, 0.5f);
  job.request_resize(dir.path());
  plain_step(*a, app, grad);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  EXPECT_EQ(requeue_calls, 0);
  const HintResult h = last_hint(a, 9012);
  ASSERT_TRUE(h) << h.error;
  EXPECT_FALSE(h.hint->checkpoint && h.hint->checkpoint->ready_for_requeue);
  App app2;
  auto b = restored(o, app2);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->step(), 1);
}

// The program's own handler of the resize signal (Slurm's --signal=USR1@60
// warning, Lightning's auto-requeue): every delivery that is not
// sched/pollux's request reaches it, whether installed before the agent or
// after; requests reach the agent alone.
std::atomic<int> g_program_calls{0};
void program_handler(int) { g_program_calls.fetch_add(1); }

struct ProgramHandler {
  explicit ProgramHandler(void (*h)(int)) {
    struct sigaction sa {};
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGUSR1, &sa, &old);
    g_program_calls = 0;
  }
  ~ProgramHandler() { ::sigaction(SIGUSR1, &old, nullptr); }
  struct sigaction old {};
};

TEST(LocalAgent, DeliveriesThatAreNotRequestsReachTheProgramsHandlerInstalledBefore) {
  TempDir dir;
  SlurmJob job("9004");
  ProgramHandler program(program_handler);
  const AgentOptions o = exit_mode_options(dir);
  App app;
  std::vector<float> grad(10, 0.5f);
  {
    auto a = attached(o, app);
    struct sigaction now {};
    ::sigaction(SIGUSR1, nullptr, &now);
    EXPECT_NE(now.sa_flags & SA_RESTART, 0) << "interrupted system calls would fail with EINTR";
    ::raise(SIGUSR1);  // Slurm's warning: no decision in the spool
    EXPECT_EQ(g_program_calls, 1);
    plain_step(*a, app, grad);
    EXPECT_EQ(a->step_end(), StepAction::kContinue) << "a warning was taken for a resize";
    job.request_resize(dir.path());
    EXPECT_EQ(g_program_calls, 1) << "the resize request reached the program's handler";
    plain_step(*a, app, grad);
    EXPECT_EQ(a->step_end(), StepAction::kRequeueExit);
  }
  // The agent gone, the program's handler is the signal's again.
  struct sigaction after {};
  ::sigaction(SIGUSR1, nullptr, &after);
  EXPECT_EQ(after.sa_handler, program_handler);
}

TEST(LocalAgent, AHandlerTheProgramInstallsLaterStillGetsItsDeliveries) {
  TempDir dir;
  SlurmJob job("9011");
  ProgramHandler program(SIG_IGN);
  AgentOptions o = exit_mode_options(dir);
  App app;
  auto a = attached(o, app);
  std::vector<float> grad(10, 0.5f);
  struct sigaction sa {};
  sa.sa_handler = program_handler;  // as Python's signal.signal() or Lightning would
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGUSR1, &sa, nullptr);
  EXPECT_EQ(pollux_agent_reclaim_signal(), 1);  // also done at every step boundary
  EXPECT_EQ(pollux_agent_reclaim_signal(), 0);
  ::raise(SIGUSR1);
  EXPECT_EQ(g_program_calls, 1);
  plain_step(*a, app, grad);
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  ::sigaction(SIGUSR1, &sa, nullptr);  // again, reclaimed at the next step
  plain_step(*a, app, grad);
  job.request_resize(dir.path());
  EXPECT_EQ(g_program_calls, 1);
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  plain_step(*a, app, grad);
  EXPECT_EQ(a->step_end(), StepAction::kRequeueExit);
}

// Without a handler of the program's, a delivery that is not a request asks
// for what Slurm's --signal is for: a checkpoint, and training goes on.
TEST(LocalAgent, ANonRequestWithoutAProgramHandlerIsACheckpointNotAResize) {
  TempDir dir;
  SlurmJob job("9012");
  AgentOptions o = options(dir);
  o.checkpoint_interval = 0;
  App app;
  auto a = attached(o, app);
  std::vector<float> grad(10, 0.5f);
  run_steps(*a, app, grad, 2);
  ::raise(SIGUSR1);  // the default action would end this process
  plain_step(*a, app, grad);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(a->step_end(), StepAction::kContinue);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5) << "waited for a requeue";
  App app2;
  auto b = restored(o, app2);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->step(), 3);
  const HintResult h = last_hint(a, 9012);
  ASSERT_TRUE(h) << h.error;
  ASSERT_TRUE(h.hint->checkpoint);
  EXPECT_FALSE(h.hint->checkpoint->ready_for_requeue);
}

// The hint says the agent listens, and on which signal, from the first
// step's all-reduce (every rank's agent and handler exist) while it does:
// the job is elastic from then on; its last hint says it no longer listens.
TEST(LocalAgent, TheHintAnnouncesTheResizeSignalWhileTheAgentListens) {
  TempDir dir;
  SlurmJob job("9013");
  AgentOptions o = options(dir);
  std::string path;
  {
    App app;
    auto a = attached(o, app);
    path = a->hint_file();
    HintResult h;  // written by the agent's background thread
    for (int i = 0; i < 500 && !(h = read_hint_file(path, ::getuid(), 9013)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(h) << h.error;
    EXPECT_EQ(h.hint->resize_signal, 0) << "announced before every rank's agent was known to exist";
    std::vector<float> grad(10, 0.5f);
    plain_step(*a, app, grad);  // its all-reduce: every rank has its agent
    for (int i = 0; i < 500 && (h = read_hint_file(path, ::getuid(), 9013)) && h.hint->resize_signal == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(h) << h.error;
    EXPECT_EQ(h.hint->resize_signal, SIGUSR1);
  }
  const HintResult last = read_hint_file(path, ::getuid(), 9013);
  ASSERT_TRUE(last) << last.error;
  EXPECT_EQ(last.hint->resize_signal, 0);
  o.resize_signal = 0;
  make_local_agent(o).reset();  // its first and last hints
  const HintResult none = read_hint_file(path, ::getuid(), 9013);
  ASSERT_TRUE(none) << none.error;
  EXPECT_EQ(none.hint->resize_signal, 0) << "announced a signal nobody listens on";
}

TEST(LocalAgent, WritesAHintThatTheSchedulerAccepts) {
  TempDir dir;
  SlurmJob job("9003");
  AgentOptions o = fitting_options(dir);
  std::vector<double> grad(500);
  std::mt19937_64 rng(1);
  {
    auto a = make_local_agent(o);
    for (int t = 0; t < 40; ++t) noisy_step(*a, grad, rng, 0.05, 0.5);
  }  // the agent's last hint is written when it ends
  const HintResult h = read_hint_file(dir / "9003.hint.yaml", ::getuid(), 9003);
  ASSERT_TRUE(h) << h.error;
  EXPECT_EQ(h.hint->step, 40);
  EXPECT_TRUE(h.hint->perf) << "no fitted model";
  EXPECT_TRUE(h.hint->grad) << "no gradient statistics";
  EXPECT_FALSE(h.hint->profile.empty());
  EXPECT_EQ(h.hint->config.replicas, 1);
  EXPECT_EQ(h.hint->max_profiled_replicas, 1);
}

// A job declared sharded (FSDP: set_sharded, the C API's
// pollux_agent_set_sharded) fits the model's sharded form and says so in
// its hint; one that is not (the default) writes no perf.sharded.
TEST(LocalAgent, ASetShardedJobFitsAndPublishesTheShardedForm) {
  for (const bool sharded : {false, true}) {
    SCOPED_TRACE(sharded);
    TempDir dir;
    SlurmJob job("9021");
    AgentOptions o = fitting_options(dir);
    std::vector<double> grad(500);
    std::mt19937_64 rng(1);
    {
      auto a = make_local_agent(o);
      EXPECT_FALSE(a->sharded());
      if (sharded) a->set_sharded(true);
      EXPECT_EQ(a->sharded(), sharded);
      for (int t = 0; t < 40; ++t) noisy_step(*a, grad, rng, 0.05, 0.5);
      pollux_agent* c = nullptr;
      EXPECT_EQ(pollux_agent_set_sharded(c, 1), -1);
    }
    const HintResult h = read_hint_file(dir / "9021.hint.yaml", ::getuid(), 9021);
    ASSERT_TRUE(h) << h.error;
    ASSERT_TRUE(h.hint->perf) << "no fitted model";
    EXPECT_EQ(h.hint->perf->sharded, sharded);
    EXPECT_EQ(slurp(dir / "9021.hint.yaml").find("sharded") != std::string::npos, sharded);
  }
}

// What a restart costs the job (the hint's restart_seconds), measured by
// rank 0 at the end of each run's first step: this process's age then,
// plus after a restore the save time of the checkpoint it came from, kept
// in that checkpoint. Not known before the first step. (One process plays
// every run here, so a later run's age includes the earlier runs'.)
TEST(LocalAgent, TheHintCarriesWhatARestartCostsAfterTheFirstStep) {
  TempDir dir;
  SlurmJob job("9015");
  const AgentOptions o = options(dir);
  const auto restart_seconds = [&] {
    const HintResult h = read_hint_file(dir / "9015.hint.yaml", ::getuid(), 9015);
    EXPECT_TRUE(h) << h.error;
    return h ? h.hint->restart_seconds : -1.0;
  };
  std::vector<float> grad(10, 0.5f);
  constexpr double kSave = 0.25;  // the application's save takes at least this
  const auto run = [&](int restart, int steps) {
    job.restart(restart);
    App app;
    auto a = attached(o, app);
    a->on_checkpoint([&](const CheckpointContext& c) {
      write_text(c.dir + "/model", std::to_string(app.model_step));
      std::this_thread::sleep_for(std::chrono::duration<double>(kSave));
    });
    EXPECT_EQ(a->restore(), restart > 0);
    run_steps(*a, app, grad, steps);
    if (steps > 0) a->checkpoint();
  };  // each run's last hint is written as its agent ends
  run(0, 0);
  EXPECT_EQ(restart_seconds(), 0) << "known before the first step";
  run(0, 1);
  const double first = restart_seconds();
  EXPECT_GT(first, 0) << "a first run: its start to its first step";
  const agent_detail::AgentState saved =
      agent_detail::parse_agent_state(slurp(*CheckpointStore(dir / "ckpt").latest() + "/" + agent_detail::kAgentStateFile));
  EXPECT_GE(saved.save_seconds, kSave);
  run(1, 1);
  EXPECT_GE(restart_seconds(), first + saved.save_seconds) << "the restored checkpoint's save is a part of it";
}

// A job requeued onto another GPU type (POLLUX_GPU_TYPE differs between its
// runs, as the local cluster's --gpu-types sets it): each run reports its
// type and profiles it afresh, and the fit of each type it left travels in
// the checkpoint into the hint's type_perf, and back when the job returns.
TEST(LocalAgent, ARestartOnAnotherGpuTypeKeepsEachTypesFitAndSamples) {
  TempDir dir;
  SlurmJob job("9010");
  AgentOptions o = fitting_options(dir);
  std::vector<double> grad(500);
  std::mt19937_64 rng(1);
  const std::string hint_file = dir / "9010.hint.yaml";
  const auto hint = [&] {
    // A first run's hint is the agent's creation's, written by its worker
    // thread: wait for it (a restore writes and flushes its own).
    HintResult h = read_hint_file(hint_file, ::getuid(), 9010);
    for (int i = 0; i < 1000 && !h; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      h = read_hint_file(hint_file, ::getuid(), 9010);
    }
    EXPECT_TRUE(h) << h.error;
    return h ? *h.hint : Hint{};
  };
  const auto checkpointed = [&] {
    return agent_detail::parse_agent_state(
        slurp(*CheckpointStore(dir / "ckpt").latest() + "/" + agent_detail::kAgentStateFile));
  };
  // Runs on `type`: restores, then (after `check`, on the hint the restore
  // wrote) trains until the adaptation worker has fitted this type (at
  // least 30 steps) and checkpoints.
  const auto run_on = [&](const char* type, int restart, const std::function<void(const Hint&)>& check) {
    ::setenv("POLLUX_GPU_TYPE", type, 1);
    job.restart(restart);
    auto a = make_local_agent(o);
    ::unsetenv("POLLUX_GPU_TYPE");
    EXPECT_EQ(a->restore(), restart > 0);
    check(hint());
    for (int t = 0; t < 30; ++t) noisy_step(*a, grad, rng, 0.05, 0.5);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!a->perf_params() && std::chrono::steady_clock::now() < give_up) noisy_step(*a, grad, rng, 0.05, 0.5);
    a->checkpoint();
  };

  run_on("NVIDIA A100-SXM4-80GB", 0, [](const Hint& h) { EXPECT_EQ(h.gpu_type, "nvidia_a100-sxm4-80gb"); });
  const agent_detail::AgentState on_a100 = checkpointed();
  EXPECT_EQ(on_a100.gpu_type, "nvidia_a100-sxm4-80gb");
  ASSERT_TRUE(on_a100.perf) << "no fit on the first type";
  EXPECT_FALSE(on_a100.profile.empty());

  run_on("h100", 1, [&](const Hint& h) {
    EXPECT_EQ(h.gpu_type, "h100");
    EXPECT_FALSE(h.perf) << "the A100's fit taken for the H100's";
    EXPECT_TRUE(h.profile.empty()) << "the A100's samples in the H100's profile";
    ASSERT_EQ(h.type_perf.size(), 1u);
    EXPECT_EQ(h.type_perf[0].gpu_type, "nvidia_a100-sxm4-80gb");
    EXPECT_EQ(h.type_perf[0].perf.to_array(), on_a100.perf->to_array());
  });
  const agent_detail::AgentState on_h100 = checkpointed();
  ASSERT_TRUE(on_h100.perf) << "no fit on the second type";
  EXPECT_EQ(on_h100.type_perf.size(), 1u);

  EXPECT_EQ(on_h100.type_profiles.size(), 1u);
  run_on("NVIDIA A100-SXM4-80GB", 2, [&](const Hint& h) {  // back: the A100's fit and samples resume
    EXPECT_EQ(h.gpu_type, "nvidia_a100-sxm4-80gb");
    ASSERT_TRUE(h.perf);  // refitted at once from the A100's own samples
    ASSERT_EQ(h.profile.size(), on_a100.profile.size()) << "the A100's samples not resumed";
    for (std::size_t i = 0; i < h.profile.size(); ++i) {
      EXPECT_EQ(h.profile[i].atomic_batch, on_a100.profile[i].atomic_batch);
      EXPECT_EQ(h.profile[i].replicas, on_a100.profile[i].replicas);
      EXPECT_EQ(h.profile[i].step_time, on_a100.profile[i].sample().step_time);
    }
    ASSERT_EQ(h.type_perf.size(), 1u);
    EXPECT_EQ(h.type_perf[0].gpu_type, "h100");
    EXPECT_EQ(h.type_perf[0].perf.to_array(), on_h100.perf->to_array());
  });
}

// A GPU type given has to name one; without any the run is untyped.
TEST(LocalAgent, TheGpuTypeComesFromTheOptionTheVariableOrTheDevice) {
  TempDir dir;
  AgentOptions o = options(dir);
  o.device_name = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(reported_gpu_type(o), "nvidia_h100_80gb_hbm3");
  ::setenv("POLLUX_GPU_TYPE", "A100", 1);
  EXPECT_EQ(reported_gpu_type(o), "a100");
  o.gpu_type = "L40S";
  EXPECT_EQ(reported_gpu_type(o), "l40s");
  o.gpu_type.clear();
  ::setenv("POLLUX_GPU_TYPE", " !! ", 1);
  EXPECT_THROW(reported_gpu_type(o), std::invalid_argument);
  EXPECT_THROW(make_local_agent(o), std::invalid_argument);
  ::unsetenv("POLLUX_GPU_TYPE");
  o.device_name.clear();
  EXPECT_EQ(reported_gpu_type(o), "");
}

// Gives the latest checkpoint in `root` a model under which a large batch
// is far better than a small one (a costly fixed part in every micro-step,
// gradients that are almost all noise), so that the agent proposes one.
void plant_a_model_that_wants_large_batches(const std::string& root) {
  const std::string file = *CheckpointStore(root).latest() + "/" + agent_detail::kAgentStateFile;
  agent_detail::AgentState s = agent_detail::parse_agent_state(slurp(file));
  PerfParams perf;
  perf.alpha_c = 1;
  perf.beta_c = 1e-6;
  s.perf = perf;
  s.estimator = GradNoiseEstimator::State{1e-6, 1, 100, 1, 1000};
  s.profile.clear();
  write_text(file, agent_detail::emit_agent_state(s));
}

// Waits until rank 0's adaptation worker has handled a request made under
// (atomic, accum): it writes the hint after it stored its proposal.
void wait_for_hint_of(const std::string& file, std::uint32_t job, int atomic, int accum) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < give_up) {
    const HintResult h = read_hint_file(file, ::getuid(), job);
    if (h && h.hint->config.atomic_batch == atomic && h.hint->config.accum_steps == accum) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  FAIL() << "no hint written for atomic " << atomic << ", accum " << accum;
}

// The worker computes a proposal against the configuration of the moment;
// if the application sets another before it arrives, it improves on a
// configuration no longer in use and is dropped, not applied over the
// application's choice.
TEST(LocalAgent, AProposalForAConfigurationNoLongerInUseIsDropped) {
  TempDir dir;
  SlurmJob job("9008");
  std::vector<float> grad(10, 0.01f);
  {
    App app;
    auto a = attached(options(dir), app);
    run_steps(*a, app, grad, 2);
    a->checkpoint();
  }
  plant_a_model_that_wants_large_batches(dir / "ckpt");
  AgentOptions o = options(dir);
  o.adapt = true;
  o.refit_interval = 1e6;  // the planted model stays
  o.min_profile_steps = 1000;
  App app;
  auto b = restored(o, app);
  ASSERT_TRUE(b);
  const std::pair<int, int> best{b->atomic_batch(), b->accum_steps()};
  ASSERT_GT(b->total_batch(), 64) << "the planted model should want more than M0";
  const std::string hint = b->hint_file();

  b->set_batch_config(16, 0);
  run_steps(*b, app, grad, 1);  // its step_end() asks the worker (under 16, 0)
  wait_for_hint_of(hint, 9008, 16, 0);  // a proposal for (16, 0) is ready
  b->set_batch_config(32, 0);
  run_steps(*b, app, grad, 1);
  EXPECT_EQ(std::make_pair(b->atomic_batch(), b->accum_steps()), std::make_pair(32, 0))
      << "a proposal computed for (16, 0) overrode the application's (32, 0)";

  // A proposal computed for the configuration in use is applied.
  wait_for_hint_of(hint, 9008, 32, 0);
  run_steps(*b, app, grad, 1);
  EXPECT_EQ(std::make_pair(b->atomic_batch(), b->accum_steps()), best);
}

// kill -9 of a process while it checkpoints, at random moments: a restore
// always finds a complete checkpoint whose model matches its agent state.
TEST(LocalAgent, KillNineDuringACheckpointKeepsTheLastCompleteOne) {
  TempDir dir;
  const std::string big(512 * 1024, 'w');
  std::mt19937 rng(3);
  for (int round = 0; round < 8; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto a = make_local_agent(options(dir));
      App app;
      a->on_checkpoint([&](const CheckpointContext& c) {
        // A slow, multi-part model file: plenty of time to be killed in it.
        for (int part = 0; part < 4; ++part) write_text(c.dir + "/part" + std::to_string(part), std::to_string(c.step) + big);
        write_text(c.dir + "/model", std::to_string(app.model_step));
      });
      a->on_restore([&](const CheckpointContext& c) { app.model_step = std::stoll(slurp(c.dir + "/model")); });
      a->restore();
      std::vector<float> grad(10, 0.5f);
      for (;;) {
        plain_step(*a, app, grad);
        a->step_end();
        a->checkpoint();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30 + rng() % 200));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));

    auto a = make_local_agent(options(dir));
    App app;
    std::string parts_ok;
    a->on_restore([&](const CheckpointContext& c) {
      app.model_step = std::stoll(slurp(c.dir + "/model"));
      for (int part = 0; part < 4; ++part)
        if (slurp(c.dir + "/part" + std::to_string(part)) != std::to_string(c.step) + big) parts_ok += "part" + std::to_string(part) + " ";
    });
    if (!a->restore()) continue;  // killed before the first checkpoint
    EXPECT_EQ(app.model_step, a->step()) << "round " << round;
    EXPECT_EQ(parts_ok, "") << "round " << round << ": torn files";
  }
}

}  // namespace
}  // namespace pollux

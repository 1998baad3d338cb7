// AgentOptions from the environment, JobEnvironment, initial_config.
#include <gtest/gtest.h>

#include <cstdlib>

#include "pollux/agent.h"

namespace pollux {
namespace {

class Env {
 public:
  Env(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~Env() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(AgentOptions, EnvironmentOverridesTheLimits) {
  Env a("POLLUX_INIT_BATCH", "128"), b("POLLUX_MAX_BATCH", "4096"), c("POLLUX_MIN_ATOMIC", "16"),
      d("POLLUX_MAX_ATOMIC", "512"), e("POLLUX_ACCUMULATION", "no"), f("POLLUX_REQUEUE_MODE", "exit"),
      g("POLLUX_REQUEUE_WAIT", "12.5"), h("POLLUX_RESIZE_SIGNAL", "SIGUSR2"), i("POLLUX_CHECKPOINT_INTERVAL", "600");
  AgentOptions o;
  o.apply_environment();
  EXPECT_EQ(o.limits.init_batch, 128);
  EXPECT_EQ(o.limits.max_batch, 4096);
  EXPECT_EQ(o.limits.min_atomic, 16);
  EXPECT_EQ(o.limits.max_atomic, 512);
  EXPECT_FALSE(o.limits.accumulation);
  EXPECT_EQ(o.requeue_mode, RequeueMode::kExit);
  EXPECT_EQ(o.requeue_wait, 12.5);
  EXPECT_EQ(o.resize_signal, SIGUSR2);
  EXPECT_EQ(o.checkpoint_interval, 600);
  EXPECT_NO_THROW(o.validate());
}

TEST(AgentOptions, MalformedValuesNameTheVariable) {
  struct Case {
    const char* name;
    const char* value;
    const char* reason;
  };
  for (const Case& c : {Case{"POLLUX_MAX_BATCH", "lots", "POLLUX_MAX_BATCH='lots': not a finite number"},
                        Case{"POLLUX_MIN_ATOMIC", "0", "POLLUX_MIN_ATOMIC='0': out of range"},
                        Case{"POLLUX_REQUEUE_MODE", "later", "expected 'wait' or 'exit'"},
                        Case{"POLLUX_ACCUMULATION", "maybe", "expected 1/yes/true"},
                        Case{"POLLUX_RESIZE_SIGNAL", "9", "cannot be caught"},
                        Case{"POLLUX_CHECKPOINT_INTERVAL", "-5", "POLLUX_CHECKPOINT_INTERVAL='-5': out of range [0, 31536000]"}}) {
    Env e(c.name, c.value);
    AgentOptions o;
    try {
      o.apply_environment();
      ADD_FAILURE() << c.name << " accepted " << c.value;
    } catch (const std::invalid_argument& ex) {
      EXPECT_NE(std::string(ex.what()).find(c.reason), std::string::npos) << ex.what();
    }
  }
}

TEST(AgentOptions, ValidateRejectsInconsistentLimits) {
  AgentOptions o;
  o.limits = BatchLimits{64, 32, 1, 8, true};
  EXPECT_THROW(o.validate(), std::invalid_argument);
}

TEST(JobEnvironment, ReadsSlurmVariables) {
  Env a("SLURM_JOB_ID", "4711"), b("SLURM_RESTART_COUNT", "2"), c("SLURM_JOB_NUM_NODES", "3"),
      d("SLURM_NTASKS", "12"), e("SLURM_PROCID", "5"), f("SLURM_JOB_NODELIST", "n[1-3]"), g("SLURMD_NODENAME", "n2");
  const JobEnvironment j = JobEnvironment::from_environment();
  EXPECT_EQ(j.job_id, 4711u);
  EXPECT_EQ(j.restart_count, 2);
  EXPECT_EQ(j.num_nodes, 3);
  EXPECT_EQ(j.ntasks, 12);
  EXPECT_EQ(j.procid, 5);
  EXPECT_EQ(j.nodelist, "n[1-3]");
  EXPECT_EQ(j.node_name, "n2");
  Env bad("SLURM_JOB_ID", "12abc");
  EXPECT_THROW(JobEnvironment::from_environment(), std::invalid_argument);
}

TEST(InitialConfig, SplitsM0OverTheReplicas) {
  const BatchLimits l{64, 1024, 8, 256, true};
  auto c = initial_config(l, 2);
  EXPECT_EQ(c.atomic_batch, 32);
  EXPECT_EQ(c.accum_steps, 0);
  c = initial_config(l, 16);  // 4 each, but m_min is 8
  EXPECT_EQ(c.atomic_batch, 8);
  const BatchLimits small{1000, 4000, 1, 300, true};
  c = initial_config(small, 1);  // 1000 > m_max: accumulate
  EXPECT_EQ(c.accum_steps, 3);
  EXPECT_EQ(c.atomic_batch, 250);
  const BatchLimits no_accum{1000, 4000, 1, 300, false};
  c = initial_config(no_accum, 1);
  EXPECT_EQ(c.accum_steps, 0);
  EXPECT_EQ(c.atomic_batch, 300);
}

}  // namespace
}  // namespace pollux

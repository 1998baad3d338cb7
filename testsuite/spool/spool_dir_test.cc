// Locating the spool: SchedulerParameters parsing and the precedence of
// POLLUX_SPOOL_DIR, slurm.conf and the default.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "pollux/spool_dir.h"
#include "spool_test_util.h"

namespace pollux {
namespace {

using test::TempDir;

TEST(SchedulerParameter, FindsKeysCaseInsensitively) {
  const std::string p = "bf_interval=30, Pollux_Spool_Dir=/srv/spool ,bf_continue,x=";
  EXPECT_EQ(scheduler_parameter(p, "pollux_spool_dir"), "/srv/spool");
  EXPECT_EQ(scheduler_parameter(p, "bf_continue"), "");
  EXPECT_EQ(scheduler_parameter(p, "x"), "");
  EXPECT_EQ(scheduler_parameter(p, "bf"), std::nullopt);
  EXPECT_EQ(scheduler_parameter("", "bf"), std::nullopt);
}

TEST(ReadSchedulerParameters, FollowsIncludesContinuationsAndComments) {
  TempDir dir;
  std::ofstream(dir / "slurm.conf") << "ClusterName=c # a comment\n"
                                       "SchedulerType=sched/pollux\n"
                                       "include extra.conf\n";
  std::ofstream(dir / "extra.conf") << "# SchedulerParameters=commented=out\n"
                                       "schedulerparameters=pollux_interval=60,\\\n"
                                       "pollux_spool_dir=/shared/pollux\n";
  const auto params = read_scheduler_parameters(dir / "slurm.conf");
  ASSERT_TRUE(params);
  EXPECT_EQ(*params, "pollux_interval=60,pollux_spool_dir=/shared/pollux");
  EXPECT_EQ(read_scheduler_parameters(dir / "absent.conf"), std::nullopt);
  // Any key the same way (the agent keys its checkpoints by StateSaveLocation).
  std::ofstream(dir / "extra.conf", std::ios::app) << "StateSaveLocation=/var/spool/slurmctld\n";
  EXPECT_EQ(read_slurm_conf_value(dir / "slurm.conf", "statesavelocation"), "/var/spool/slurmctld");
  EXPECT_EQ(read_slurm_conf_value(dir / "slurm.conf", "ClusterName"), "c");
  EXPECT_EQ(read_slurm_conf_value(dir / "slurm.conf", "SlurmctldHost"), std::nullopt);
}

TEST(ResolveSpoolDir, EnvironmentThenSlurmConfThenDefault) {
  TempDir dir;
  std::ofstream(dir / "slurm.conf") << "SchedulerParameters=pollux_spool_dir=/from/conf\n";
  ::setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
  ::setenv("POLLUX_SPOOL_DIR", "/from/env", 1);
  EXPECT_EQ(resolve_spool_dir(), "/from/env");
  ::unsetenv("POLLUX_SPOOL_DIR");
  EXPECT_EQ(resolve_spool_dir(), "/from/conf");
  ::setenv("SLURM_CONF", (dir / "none.conf").c_str(), 1);
  EXPECT_EQ(resolve_spool_dir(), kDefaultSpoolDir);
  ::unsetenv("SLURM_CONF");
}

}  // namespace
}  // namespace pollux

// The reading of per-type profiles in the layout of Sia's artifact
// (sia_artifact.h) from a synthetic directory written here: no artifact is
// needed. (The Sia-like policy's own tests: testsuite/libgoodput/test_policy_sia.cc.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "input_error.h"
#include "sia_artifact.h"
#include "sim_test_support.h"

namespace pollux::sim {
namespace {

// A directory in the layout of Sia's artifact, written here: one
// application whose `fast` profile runs every step in half the time.
std::string synthetic_artifact() {
  const std::string root = test::scratch_dir() + "/sia-artifact";
  const std::string app = root + "/sia-simulator/traces/toy";
  EXPECT_EQ(::system(("mkdir -p " + app).c_str()), 0);
  std::ofstream(app + "/validation-8.csv") << "progress,iteration,metric,grad_sqr,grad_var\n1,10,0,1,1\n2,20,0,1,1\n";
  std::ofstream(app + "/placements.csv") << "placement,local_bsz,step_time,sync_time\n1,4,0.4,0\n1,8,0.8,0\n"
                                            "2,4,0.5,0.1\n2,8,0.9,0.1\n";
  std::ofstream(app + "/placements-fast.csv") << "placement,local_bsz,step_time,sync_time\n1,4,0.2,0\n1,8,0.4,0\n"
                                                 "2,4,0.25,0.05\n2,8,0.45,0.05\n";
  std::ofstream(app + "/scalability-fast.csv") << "local_bsz,step_time,sync_time,num_nodes,num_replicas\n";
  return root;
}

TEST(SiaArtifact, ATypeRunsAtItsOwnProfile) {
  const std::string root = synthetic_artifact();
  const std::string traces = sia_traces_dir(root);
  AppCatalog base(traces);
  base.load("toy");
  std::vector<GpuType> types(2);
  types[0].name = "slow";
  types[0].nodes = 1;
  types[1].name = "fast";
  types[1].nodes = 1;
  types[1].profile = "fast";
  std::vector<std::unique_ptr<AppCatalog>> owned;
  attach_profiles(types, traces, {"toy"}, base, owned);
  EXPECT_EQ(types[0].apps, nullptr);
  ASSERT_NE(types[1].apps, nullptr);
  EXPECT_NEAR(types[1].speed, 2.0, 1e-12);  // one-GPU throughput at m_max, relative to placements.csv
  const Application& fast = types[1].apps->get("toy");
  EXPECT_DOUBLE_EQ(fast.step_times({2}, 4).step, 0.25);
  EXPECT_DOUBLE_EQ(fast.step_times({2}, 4).sync, 0.05);
  EXPECT_DOUBLE_EQ(base.get("toy").step_times({2}, 4).step, 0.5);

  types[0].profile = "missing";
  EXPECT_THROW(attach_profiles(types, traces, {"toy"}, base, owned), InputError);
  EXPECT_THROW(sia_traces_dir(test::scratch_dir()), InputError);
}

}  // namespace
}  // namespace pollux::sim

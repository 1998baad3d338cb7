// Nodes' boot times under Slurm's power saving (sched/boot_times.h): learnt
// from resume to registration, used for the nodes that must boot, kept
// across slurmctld restarts in a file read as untrusted.
#include "sched/boot_times.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace pollux::sched {
namespace {

Snapshot three_nodes(double now) {
  Snapshot s;
  s.now = now;
  s.nodes = {{"n1", 1}, {"n2", 1}, {"n3", 1}};
  for (NodeSnapshot& n : s.nodes) n.power = Power::kOff;
  return s;
}

// A job placed (or running, CONFIGURING) on a node still off makes the
// rounds watch each second: on Slurm 24.11 a 2 s boot fell between two
// periodic rounds and was not learnt.
TEST(BootTimes, AJobOnANodeNotYetOnIsAwaitingItsBoot) {
  Snapshot s = three_nodes(1000);
  s.nodes[1].power = Power::kOn;
  ElasticJobSnapshot j;
  j.job_id = 1;
  j.decided = {{1, 1}};
  s.jobs.push_back(j);
  EXPECT_FALSE(awaits_boot(s)) << "placed on a node that is on";
  s.jobs[0].decided = {{0, 1}};
  EXPECT_TRUE(awaits_boot(s)) << "placed on a node powered down";
  s.jobs[0].decided.clear();
  s.jobs[0].current = {{2, 1}};
  s.nodes[2].power = Power::kBooting;
  EXPECT_TRUE(awaits_boot(s)) << "running (CONFIGURING) on a node booting";
  s.nodes[2].power = Power::kOn;
  EXPECT_FALSE(awaits_boot(s));
}

TEST(BootTimes, ABootSeenIsLearntFromResumeToRegistration) {
  BootTimes b;
  Snapshot s = three_nodes(1000);
  EXPECT_TRUE(b.observe(s).empty());
  EXPECT_EQ(s.nodes[0].boot_wait, 0) << "nothing assumed before a boot was seen";
  s.nodes[0].power = Power::kBooting;
  s.nodes[0].boot_requested = 1000;
  s.now = 1002;
  b.observe(s);
  EXPECT_TRUE(b.booting());
  // Registered: its slurmd started at 1040, answered since.
  s.nodes[0].power = Power::kOn;
  s.nodes[0].boot_requested = 0;
  s.nodes[0].slurmd_started = 1040;
  s.nodes[0].last_response = 1045;
  s.now = 1046;
  const std::vector<std::string> lines = b.observe(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("node n1 booted in 40.0 s", 0), 0u) << lines[0];
  EXPECT_FALSE(b.booting());
  EXPECT_EQ(s.nodes[0].boot_wait, 0) << "on";
  EXPECT_EQ(s.nodes[1].boot_wait, 40) << "a node never seen booting: as the slowest seen";
  // n2 booting for 15 s: 25 s left.
  s.nodes[1].power = Power::kBooting;
  s.nodes[1].boot_requested = s.now - 15;
  b.observe(s);
  EXPECT_EQ(s.nodes[1].boot_wait, 25);
}

TEST(BootTimes, AFailedResumeIsSaidAndNotLearnt) {
  BootTimes b;
  Snapshot s = three_nodes(1000);
  s.nodes[2].power = Power::kBooting;
  s.nodes[2].boot_requested = 990;
  b.observe(s);
  s.nodes[2].power = Power::kOff;  // ResumeTimeout: DOWN and powered down
  s.nodes[2].usable = false;
  s.now = 1100;
  const std::vector<std::string> lines = b.observe(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("node n3 did not register after its resume 110.0 s ago"), std::string::npos) << lines[0];
  EXPECT_TRUE(b.learnt().empty());
  // A node removed from slurm.conf while it booted is watched no longer.
  s.nodes[1].power = Power::kBooting;
  s.nodes[1].boot_requested = 1090;
  b.observe(s);
  EXPECT_TRUE(b.booting());
  s.nodes.pop_back();
  s.nodes.pop_back();
  b.observe(s);
  EXPECT_FALSE(b.booting());
}

TEST(BootTimes, TheFileRoundTripsAndRefusesWhatItDidNotWrite) {
  std::map<std::string, NodeBoots> l = {{"n1", {41.25, 3}}, {"gpu-7", {0.5, 1}}};
  const std::string text = format_boot_times(l);
  EXPECT_EQ(text, "pollux_boot_times 1\nnode gpu-7 0.5 1\nnode n1 41.25 3\n");
  const ParsedBootTimes back = parse_boot_times(text, "f");
  EXPECT_EQ(back.error, "");
  ASSERT_EQ(back.learnt.size(), 2u);
  EXPECT_EQ(back.learnt.at("n1").seconds, 41.25);
  EXPECT_EQ(back.learnt.at("n1").boots, 3);
  EXPECT_TRUE(back.booting.empty());
  const std::string during = format_boot_times(l, {{"n2", 1796049223.5}});
  EXPECT_EQ(during, text + "booting n2 1796049223.5\n");
  const ParsedBootTimes boot = parse_boot_times(during, "f");
  EXPECT_EQ(boot.error, "");
  EXPECT_EQ(boot.learnt.size(), 2u);
  ASSERT_EQ(boot.booting.size(), 1u);
  EXPECT_EQ(boot.booting.at("n2"), 1796049223.5);
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {"", "f:0: empty"},
           {"pollux_boot_times 2\n", "f:1: not a pollux_boot_times file of this version"},
           {"pollux_boot_times 1\nnode n1 4 1", "f:2: truncated (no end of line)"},
           {"pollux_boot_times 1\nnode n1 -4 1\n", "f:2: seconds must be 0..86400 and boots at least 1"},
           {"pollux_boot_times 1\nnode n1 nan 1\n", "f:2: seconds must be 0..86400 and boots at least 1"},
           {"pollux_boot_times 1\nnode n1 4 1 x\n", "f:2: not 'node <name> <seconds> <boots>'"},
           {"pollux_boot_times 1\nnode n1 4 1\nnode n1 5 1\n", "f:3: node n1 twice"},
           {"pollux_boot_times 1\nbooting n1\n", "f:2: not 'booting <name> <resume time>'"},
           {"pollux_boot_times 1\nbooting n1 5 6\n", "f:2: not 'booting <name> <resume time>'"},
           {"pollux_boot_times 1\nbooting n1 -5\n", "f:2: a resume time must be a Unix time (0..1e11)"},
           {"pollux_boot_times 1\nbooting n1 inf\n", "f:2: a resume time must be a Unix time (0..1e11)"},
           {"pollux_boot_times 1\nnode n1 4 1\nbooting n2 5\nbooting n2 6\n", "f:4: booting n2 twice"},
       }) {
    const ParsedBootTimes r = parse_boot_times(bad, "f");
    EXPECT_EQ(r.error, why) << bad;
    EXPECT_TRUE(r.learnt.empty());
    EXPECT_TRUE(r.booting.empty());
  }
}

// StateSaveLocation's pollux_boot_times in a directory of its own, removed after.
struct StateFile {
  std::string dir = "/tmp/pollux-boot-times-XXXXXX";
  std::string path;
  StateFile() {
    if (::mkdtemp(dir.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = dir + "/pollux_boot_times";
  }
  ~StateFile() { std::system(("rm -rf " + dir).c_str()); }
};

TEST(BootTimes, KeptAcrossARestart) {
  const StateFile file;
  const std::string& path = file.path;
  BootTimes before;
  before.set_file(path);
  EXPECT_EQ(before.recall(), "") << "a first start: no file, nothing said";
  before.restore({{"n2", {12, 2}}});
  EXPECT_EQ(before.keep(), "") << "nothing new learnt: not written";
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  Snapshot s = three_nodes(1000);
  s.nodes[0].power = Power::kBooting;
  s.nodes[0].boot_requested = 990;
  before.observe(s);
  s.nodes[0].power = Power::kOn;
  s.nodes[0].slurmd_started = 998;
  s.nodes[0].last_response = 999;
  before.observe(s);
  EXPECT_EQ(before.keep(), "");
  BootTimes after;
  after.set_file(path);
  EXPECT_EQ(after.recall(), "");
  ASSERT_EQ(after.learnt().size(), 2u);
  EXPECT_EQ(after.learnt().at("n1").seconds, 8);
  EXPECT_EQ(after.learnt().at("n2").boots, 2);
  EXPECT_TRUE(after.booting_nodes().empty());
}

// slurmctld stopped while a node boots, and the node registered before the
// restarted slurmctld's first round (Slurm then clears its resume time):
// the boot is measured all the same, from the resume time kept in the file.
TEST(BootTimes, ABootUnderWayAtARestartIsMeasuredAfterIt) {
  const StateFile file;
  const std::string& path = file.path;
  BootTimes before;
  before.set_file(path);
  Snapshot s = three_nodes(1000);
  s.nodes[2].power = Power::kBooting;
  s.nodes[2].boot_requested = 999;
  before.observe(s);
  EXPECT_EQ(before.keep(), "");
  s.now = 1001;
  before.observe(s);
  EXPECT_EQ(before.keep(), "");
  ASSERT_EQ(read_boot_times(path).booting.size(), 1u) << "written once the boot began";
  BootTimes after;
  after.set_file(path);
  EXPECT_EQ(after.recall(), "");
  EXPECT_TRUE(after.booting());
  s.now = 1004;
  s.nodes[2].power = Power::kOn;
  s.nodes[2].boot_requested = 0;  // cleared at its registration
  s.nodes[2].slurmd_started = 1002;
  s.nodes[2].last_response = 1003;
  const std::vector<std::string> lines = after.observe(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("node n3 booted in 3.0 s", 0), 0u) << lines[0];
  EXPECT_EQ(after.keep(), "");
  const ParsedBootTimes kept = read_boot_times(path);
  EXPECT_TRUE(kept.booting.empty()) << "measured: no longer under way";
  EXPECT_EQ(kept.learnt.at("n3").seconds, 3);
}

}  // namespace
}  // namespace pollux::sched

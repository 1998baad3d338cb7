// Reading hints each round: valid ones give a model and the checkpoint
// acknowledgement; rejected ones are logged once per job and reason and
// leave the job without a model.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/hints.h"
#include "spool/spool_test_util.h"

namespace pollux::sched {
namespace {

class HintReaderTest : public ::testing::Test {
 protected:
  HintReaderTest() : reader([this](const std::string& line) { log.push_back(line); }) {
    snap.now = 1700000100;
    for (std::uint32_t id : {11u, 12u}) {
      ElasticJobSnapshot j;
      j.job_id = id;
      j.uid = ::getuid();
      j.range = {1, 4, 4};
      snap.jobs.push_back(j);
    }
  }
  Hint hint_for(std::uint32_t id) {
    Hint h = test::full_hint();
    h.job_id = id;
    h.uid = ::getuid();
    return h;
  }
  void write(std::uint32_t id, const Hint& h) { ASSERT_EQ(write_hint_file(dir.path(), h), ""); }
  std::vector<JobInput> read() { return reader.read(snap, dir.path()); }

  test::TempDir dir;
  Snapshot snap;
  std::vector<std::string> log;
  HintReader reader;
};

TEST_F(HintReaderTest, NoHintMeansNoModelAndNothingToLog) {
  const auto in = read();
  ASSERT_EQ(in.size(), 2u);
  EXPECT_FALSE(in[0].model);
  EXPECT_FALSE(in[0].checkpoint_ack);
  EXPECT_TRUE(log.empty());
}

TEST_F(HintReaderTest, AValidHintGivesItsModelAndAcknowledgement) {
  write(11, hint_for(11));
  Hint h = hint_for(12);
  h.checkpoint->ready_for_requeue = false;
  write(12, h);
  const auto in = read();
  ASSERT_TRUE(in[0].model);
  EXPECT_EQ(in[0].checkpoint_ack, 1700000000.0);
  ASSERT_TRUE(in[1].model);
  EXPECT_FALSE(in[1].checkpoint_ack);  // not ready for requeue
  EXPECT_TRUE(log.empty());
}

TEST_F(HintReaderTest, ARejectedHintIsLoggedOnceAndLeavesNoModel) {
  Hint h = hint_for(11);
  h.job_id = 99;  // a hint for another job under this job's name
  ASSERT_EQ(write_hint_file(dir.path(), h), "");
  ASSERT_EQ(::rename(hint_path(dir.path(), 99).c_str(), hint_path(dir.path(), 11).c_str()), 0);
  for (int round = 0; round < 3; ++round) EXPECT_FALSE(read()[0].model);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].rfind("JobId=11: hint rejected", 0), 0u) << log[0];
  // Fixed: the model comes back, and a later, different problem is logged again.
  write(11, hint_for(11));
  EXPECT_TRUE(read()[0].model);
  std::ofstream(hint_path(dir.path(), 11)) << "version: 99\n";
  EXPECT_FALSE(read()[0].model);
  EXPECT_EQ(log.size(), 2u);
}

TEST_F(HintReaderTest, ASymlinkIsRejected) {
  write(12, hint_for(12));
  ASSERT_EQ(::symlink(hint_path(dir.path(), 12).c_str(), hint_path(dir.path(), 11).c_str()), 0);
  const auto in = read();
  EXPECT_FALSE(in[0].model);
  EXPECT_TRUE(in[1].model);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("JobId=11"), std::string::npos);
}

TEST_F(HintReaderTest, AFileOfAnotherUserIsRejected) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  write(11, hint_for(11));
  ASSERT_EQ(::chown(hint_path(dir.path(), 11).c_str(), 4242, 4242), 0);
  EXPECT_FALSE(read()[0].model);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("JobId=11"), std::string::npos);
}

TEST_F(HintReaderTest, AnUnchangedFileIsNotReadAgain) {
  write(11, hint_for(11));
  ASSERT_TRUE(read()[0].model);
  // Garbage now, but same inode, size and time: the cached model stays.
  const std::string path = hint_path(dir.path(), 11);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  {
    std::fstream f(path, std::ios::in | std::ios::out);
    f << std::string(static_cast<std::size_t>(st.st_size), '#');
  }
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  EXPECT_TRUE(read()[0].model);
  // A rewrite (new inode) is read.
  Hint h = hint_for(11);
  h.perf.reset();
  write(11, h);
  EXPECT_FALSE(read()[0].model);
  EXPECT_TRUE(log.empty());
}

TEST_F(HintReaderTest, JobsHeldByOthersAreNotRead) {
  write(11, hint_for(11));
  snap.jobs[0].held_by_other = true;
  EXPECT_FALSE(read()[0].model);
}

}  // namespace
}  // namespace pollux::sched

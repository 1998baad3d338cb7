// Reading hints each round: valid ones give a model and the checkpoint
// acknowledgement; rejected ones are logged once per job and reason and
// leave the job without a model.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "sched/log_safe.h"

#include "sched/hints.h"
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
  h.restart_seconds = 0;  // not measured
  write(12, h);
  const auto in = read();
  ASSERT_TRUE(in[0].model);
  EXPECT_EQ(in[0].checkpoint_ack, 1700000000.0);
  EXPECT_EQ(in[0].restart_seconds, 42.5);  // what a restart costs the job
  ASSERT_TRUE(in[1].model);
  EXPECT_FALSE(in[1].checkpoint_ack);  // not ready for requeue
  EXPECT_EQ(in[1].restart_seconds, 0);
  EXPECT_TRUE(log.empty());
}

// A requeued job's new run writes hints before its first step, without a
// restart time: the one its earlier run measured stands until it has one.
TEST_F(HintReaderTest, AHintWithoutARestartTimeKeepsTheJobsLast) {
  Hint h = hint_for(11);
  write(11, h);
  EXPECT_EQ(read()[0].restart_seconds, 42.5);
  h.restart_count = 4;
  h.restart_seconds = 0;
  h.timestamp += 1;  // another file
  write(11, h);
  EXPECT_EQ(read()[0].restart_seconds, 42.5);
  h.restart_seconds = 7.25;  // the new run's own
  h.timestamp += 1;
  write(11, h);
  EXPECT_EQ(read()[0].restart_seconds, 7.25);
  EXPECT_EQ(read()[1].restart_seconds, 0);  // job 12 has reported none
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
  // Counted as logged (round_stats.h), then the count starts afresh.
  EXPECT_EQ(reader.take_rejections(), (std::map<std::string, long long>{{"invalid", 2}}));
  EXPECT_TRUE(reader.take_rejections().empty());
}

TEST_F(HintReaderTest, ARejectionQuotingTheFileStaysOnOneLine) {
  // A plain scalar's blank line is a newline in its value: the rejection
  // used to forge a second line in slurmctld's log.
  std::ofstream(hint_path(dir.path(), 11)) << "version: 1\n\n  [2026-01-01T00:00:00] error - JobId=12 forged\n";
  EXPECT_FALSE(read()[0].model);
  ASSERT_EQ(log.size(), 1u);
  const std::string& line = log[0];
  EXPECT_EQ(line.rfind("JobId=11: hint rejected, no model used: " + hint_path(dir.path(), 11) + ": ", 0), 0u) << line;
  EXPECT_NE(line.find("'1\\n[2026-01-01T00:00:00] error - JobId=12 forged' is not an integer"), std::string::npos) << line;
  for (char c : line) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << line;
  // And it is short, whatever the file holds.
  std::ofstream(hint_path(dir.path(), 11)) << "version: '" << std::string(4000, 'z') << "'\n";
  read();
  std::ofstream(hint_path(dir.path(), 11)) << "version: 1" << std::string(4000, 'z') << "\n";
  read();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_LE(log[2].size(), kLogSafeMax);
  EXPECT_NE(log[2].find(hint_path(dir.path(), 11)), std::string::npos);
}

TEST_F(HintReaderTest, AnEntryThatCannotBeExaminedIsNeitherJudgedNorRemoved) {
  // lstat() failing otherwise than ENOENT (ESTALE, EIO on NFS; here ELOOP
  // and ENAMETOOLONG) says nothing about the file: no "owned by uid 0",
  // no removal, one line per job.
  const std::string loop = dir.path() + "/loop";
  ASSERT_EQ(::symlink("loop", loop.c_str()), 0);
  for (int round = 0; round < 2; ++round) EXPECT_FALSE(reader.read(snap, loop)[0].model);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(reader.take_rejections(), (std::map<std::string, long long>{{"unexaminable", 2}}));  // as logged
  EXPECT_NE(log[0].find("JobId=11: hint rejected, no model used: " + hint_path(loop, 11) + ": cannot examine it: " +
                        std::strerror(ELOOP)), std::string::npos) << log[0];
  const std::string too_long = dir.path() + "/" + std::string(300, 'd');  // a name longer than NAME_MAX
  EXPECT_FALSE(reader.read(snap, too_long)[1].model);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_NE(log[3].find(std::string("cannot examine it: ") + std::strerror(ENAMETOOLONG)), std::string::npos);
  for (const std::string& l : log) EXPECT_EQ(l.find("owned by"), std::string::npos) << l;
  // A valid hint read before stays in use, and that is said once.
  write(11, hint_for(11));
  ASSERT_TRUE(read()[0].model);
  log.clear();
  for (int round = 0; round < 2; ++round) EXPECT_TRUE(reader.read(snap, loop)[0].model);
  ASSERT_EQ(log.size(), 2u);  // job 11: kept; job 12: rejected
  EXPECT_EQ(log[0].rfind("JobId=11: hint not read, the last valid one stays in use: " + hint_path(loop, 11), 0), 0u)
      << log[0];
  EXPECT_TRUE(::access(hint_path(dir.path(), 11).c_str(), F_OK) == 0);
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

TEST_F(HintReaderTest, AFileOfAnotherUserIsRejectedAndRemoved) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  write(11, hint_for(11));
  ASSERT_EQ(::chown(hint_path(dir.path(), 11).c_str(), 4242, 4242), 0);
  EXPECT_FALSE(read()[0].model);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("JobId=11"), std::string::npos);
  EXPECT_NE(log[0].find("owned by uid 4242"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("(removed)"), std::string::npos) << log[0];
  EXPECT_EQ(reader.take_rejections(), (std::map<std::string, long long>{{"owner", 1}}));
  // Gone, so the job's own agent can write its hint, which is then taken up.
  struct stat st {};
  EXPECT_NE(::lstat(hint_path(dir.path(), 11).c_str(), &st), 0);
  write(11, hint_for(11));
  EXPECT_TRUE(read()[0].model);
  EXPECT_EQ(log.size(), 1u);
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

TEST_F(HintReaderTest, AHintWrittenBeforeTheJobWasSubmittedIsRejected) {
  write(11, hint_for(11));  // timestamp 1700000000.5
  snap.jobs[0].submit_time = 1700000000.5 + kHintClockSlack + 1;
  snap.jobs[1].submit_time = 1700000000.5 + kHintClockSlack - 1;  // within the clock slack
  write(12, hint_for(12));
  const auto in = read();
  EXPECT_FALSE(in[0].model);
  EXPECT_TRUE(in[1].model);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("JobId=11: hint rejected"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("left by an earlier job with the same id"), std::string::npos) << log[0];
  EXPECT_EQ(reader.take_rejections(), (std::map<std::string, long long>{{"earlier-job", 1}}));
}

class SpoolSweepTest : public HintReaderTest {
 protected:
  // A file in the spool last written `age` seconds before snap.now.
  void put(const std::string& name, double age, bool symlink = false) {
    const std::string path = dir.path() + "/" + name;
    if (symlink) {
      ASSERT_EQ(::symlink("/etc/passwd", path.c_str()), 0);
    } else {
      std::ofstream(path) << "x";
    }
    const struct timespec t = {static_cast<time_t>(snap.now - age), 0};
    const struct timespec times[2] = {t, t};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  }
  bool exists(const std::string& name) {
    struct stat st {};
    return ::lstat((dir.path() + "/" + name).c_str(), &st) == 0;
  }
};

TEST_F(SpoolSweepTest, RemovesOnlyOldFilesOfJobsThatAreNotElastic) {
  put("11.hint.yaml", 7200);               // an elastic job of the snapshot: kept however old
  put("99.hint.yaml", 7200);               // an ended job: removed
  put("98.hint.yaml", 60);                 // ended a minute ago: kept for now
  put(".97.hint.yaml.tmp.a1B2c3", 7200);   // a dead writer's temporary file: removed
  put("96.hint.yaml", 7200, true);         // a planted link: removed, its target untouched
  put("notes.txt", 7200);                  // not the agents' name: left alone
  put("x1.hint.yaml", 7200);
  put("99999999999.hint.yaml", 7200);      // beyond a job id
  put("11.resize", 7200);                  // sched/pollux's resize decisions: as the hints
  put("99.resize", 7200);
  put(".99.resize.tmp.Zz9", 7200);
  const SpoolSweep s = sweep_spool(snap, dir.path(), 3600);
  EXPECT_TRUE(s.errors.empty());
  EXPECT_EQ(s.removed, 5);
  EXPECT_TRUE(exists("11.resize"));
  EXPECT_FALSE(exists("99.resize"));
  EXPECT_FALSE(exists(".99.resize.tmp.Zz9"));
  EXPECT_TRUE(exists("11.hint.yaml"));
  EXPECT_FALSE(exists("99.hint.yaml"));
  EXPECT_TRUE(exists("98.hint.yaml"));
  EXPECT_FALSE(exists(".97.hint.yaml.tmp.a1B2c3"));
  EXPECT_FALSE(exists("96.hint.yaml"));
  EXPECT_TRUE(exists("notes.txt"));
  EXPECT_TRUE(exists("x1.hint.yaml"));
  EXPECT_TRUE(exists("99999999999.hint.yaml"));
  struct stat st {};
  EXPECT_EQ(::stat("/etc/passwd", &st), 0);
}

TEST_F(SpoolSweepTest, AMissingSpoolIsAnError) {
  const SpoolSweep s = sweep_spool(snap, dir.path() + "/none", 3600);
  EXPECT_EQ(s.removed, 0);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_NE(s.errors[0].find("cannot read the spool"), std::string::npos) << s.errors[0];
}

}  // namespace
}  // namespace pollux::sched

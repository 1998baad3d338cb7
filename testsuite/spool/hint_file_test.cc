// read_hint_file / write_hint_file: the file-level checks the plugin relies
// on (owner, symlinks, file type, size, job id, uid) and atomic rewrites.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "pollux/hint.h"
#include "spool_test_util.h"

namespace pollux {
namespace {

using test::full_hint;
using test::TempDir;
using test::write_text;

// The hint as the current user would write it.
Hint my_hint() {
  Hint h = full_hint();
  h.uid = static_cast<std::uint32_t>(::getuid());
  return h;
}

// Whether reading was refused with a reason that contains `why`.
::testing::AssertionResult rejected(const HintResult& r, const std::string& why) {
  if (r) return ::testing::AssertionFailure() << "accepted, expected a refusal naming '" << why << "'";
  if (r.error.find(why) == std::string::npos)
    return ::testing::AssertionFailure() << "refused for another reason: " << r.error;
  return ::testing::AssertionSuccess();
}

TEST(ReadHintFile, AcceptsAFileWrittenByWriteHintFile) {
  TempDir dir;
  const Hint h = my_hint();
  ASSERT_EQ(write_hint_file(dir.path(), h), "");
  const HintResult r = read_hint_file(hint_path(dir.path(), h.job_id), h.uid, h.job_id);
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(emit_hint(*r.hint), emit_hint(h));
}

TEST(ReadHintFile, RejectsAMissingFile) {
  TempDir dir;
  EXPECT_TRUE(rejected(read_hint_file(dir / "1.hint.yaml", ::getuid(), 1), "No such file"));
}

TEST(ReadHintFile, RejectsASymlinkEvenToAValidHint) {
  TempDir dir;
  const Hint h = my_hint();
  ASSERT_EQ(write_hint_file(dir.path(), h), "");
  const std::string link = dir / "99.hint.yaml";
  ASSERT_EQ(::symlink(hint_path(dir.path(), h.job_id).c_str(), link.c_str()), 0);
  EXPECT_TRUE(rejected(read_hint_file(link, h.uid, h.job_id), "is a symbolic link"));
}

TEST(ReadHintFile, RejectsADirectory) {
  TempDir dir;
  const std::string sub = dir / "5.hint.yaml";
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  EXPECT_TRUE(rejected(read_hint_file(sub, ::getuid(), 5), "not a regular file"));
}

TEST(ReadHintFile, RejectsAFifoWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir / "6.hint.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // Must return: no writer exists.
  EXPECT_TRUE(rejected(read_hint_file(fifo, ::getuid(), 6), "not a regular file"));
}

TEST(ReadHintFile, RejectsAFileOfAnotherOwner) {
  TempDir dir;
  const Hint h = my_hint();
  ASSERT_EQ(write_hint_file(dir.path(), h), "");
  // The expected owner differs from the file's (works for any user).
  const std::uint32_t other = h.uid + 1;
  EXPECT_TRUE(rejected(read_hint_file(hint_path(dir.path(), h.job_id), other, h.job_id),
                       "owned by uid " + std::to_string(h.uid)));
}

TEST(ReadHintFile, RejectsAFileChownedToAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  TempDir dir;
  Hint h = my_hint();
  h.uid = 4321;  // the job's user; the file is planted by someone else
  ASSERT_EQ(write_hint_file(dir.path(), h), "");
  const std::string path = hint_path(dir.path(), h.job_id);
  ASSERT_EQ(::chown(path.c_str(), 1234, 1234), 0);
  EXPECT_TRUE(rejected(read_hint_file(path, 4321, h.job_id), "owned by uid 1234, expected uid 4321"));
}

TEST(ReadHintFile, RejectsAFileOverTheSizeCapUnread) {
  TempDir dir;
  const std::string path = dir / "4242.hint.yaml";
  write_text(path, emit_hint(my_hint()) + "# " + std::string(kHintMaxBytes, 'x') + "\n");
  EXPECT_TRUE(rejected(read_hint_file(path, ::getuid(), 4242), "more than the limit of 262144"));
}

TEST(ReadHintFile, RejectsAnotherJobsHint) {
  TempDir dir;
  const Hint h = my_hint();
  ASSERT_EQ(write_hint_file(dir.path(), h), "");
  // Someone copies job 4242's hint to job 7's name.
  ASSERT_EQ(::rename(hint_path(dir.path(), 4242).c_str(), hint_path(dir.path(), 7).c_str()), 0);
  EXPECT_TRUE(rejected(read_hint_file(hint_path(dir.path(), 7), h.uid, 7), "job_id 4242 does not match job 7"));
}

TEST(ReadHintFile, RejectsAUidFieldThatIsNotTheOwner) {
  TempDir dir;
  Hint h = my_hint();
  h.uid = h.uid + 1;
  ASSERT_EQ(write_hint_file(dir.path(), h), "");
  EXPECT_TRUE(rejected(read_hint_file(hint_path(dir.path(), h.job_id), h.uid - 1, h.job_id),
                       "does not match the job's uid"));
}

TEST(ReadHintFile, PrefixesParseErrorsWithThePath) {
  TempDir dir;
  const std::string path = dir / "4242.hint.yaml";
  write_text(path, "version: 9\n");
  const HintResult r = read_hint_file(path, ::getuid(), 4242);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error.rfind(path + ": unsupported format version 9", 0), 0u) << r.error;
}

TEST(WriteHintFile, CreatesAWorldReadableFileAndNoLeftovers) {
  TempDir dir;
  ASSERT_EQ(write_hint_file(dir.path(), my_hint()), "");
  struct stat st;
  ASSERT_EQ(::stat(hint_path(dir.path(), 4242).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(st.st_uid, ::getuid());
  // Only the hint itself: the temporary file was renamed, not copied.
  const int entries = std::system(("test $(ls -A '" + dir.path() + "' | wc -l) -eq 1").c_str());
  EXPECT_EQ(entries, 0);
}

TEST(WriteHintFile, ReportsAMissingSpoolDirectory) {
  TempDir dir;
  const std::string err = write_hint_file(dir / "absent", my_hint());
  EXPECT_NE(err.find("cannot create a temporary file in " + (dir / "absent")), std::string::npos) << err;
}

// A reader polling while the writer rewrites must only ever see complete
// hints, old or new (the rename is atomic).
TEST(WriteHintFile, ConcurrentReaderNeverSeesAPartialFile) {
  TempDir dir;
  Hint h = my_hint();
  ASSERT_EQ(write_hint_file(dir.path(), h), "");
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0}, bad{0};
  std::string first_bad;
  std::thread reader([&] {
    while (!stop) {
      const HintResult r = read_hint_file(hint_path(dir.path(), h.job_id), h.uid, h.job_id);
      if (!r && bad++ == 0) first_bad = r.error;
      ++reads;
    }
  });
  for (int i = 0; i < 300; ++i) {
    h.step = 1200 + i;
    h.profile.resize(1 + i % 40, h.profile.front());  // sizes vary
    ASSERT_EQ(write_hint_file(dir.path(), h), "");
  }
  stop = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(bad.load(), 0) << first_bad;
}

}  // namespace
}  // namespace pollux

// write_file_atomic under kill -9: whatever the moment, the file holds
// either the previous content or the new one, completely.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "pollux/atomic_file.h"
#include "spool_test_util.h"

namespace pollux {
namespace {

using test::slurp;
using test::TempDir;


// Content number k: 1 MiB of the letter 'a' + k % 26, so a torn file shows.
std::string content(int k) { return std::string(1 << 20, static_cast<char>('a' + k % 26)); }

bool is_whole(const std::string& s) {
  return s.size() == (1u << 20) && s.find_first_not_of(s[0]) == std::string::npos;
}

TEST(WriteFileAtomic, WritesAndReplaces) {
  TempDir dir;
  const std::string path = dir / "f";
  ASSERT_EQ(write_file_atomic(path, "one", 0600), "");
  EXPECT_EQ(slurp(path), "one");
  ASSERT_EQ(write_file_atomic(path, "two", 0644), "");
  EXPECT_EQ(slurp(path), "two");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

// `replaced` tells a failure that left the target as it was from one
// after the rename (only the directory's fsync, not provoked here).
TEST(WriteFileAtomic, SaysWhetherTheTargetWasReplaced) {
  TempDir dir;
  const std::string path = dir / "f";
  bool replaced = false;
  ASSERT_EQ(write_file_atomic(path, "one", 0644, &replaced), "");
  EXPECT_TRUE(replaced);
  const std::string busy = dir / "busy";  // a non-empty directory: the rename fails
  ASSERT_EQ(::mkdir(busy.c_str(), 0755), 0);
  ASSERT_EQ(write_file_atomic(busy + "/x", "x"), "");
  const std::string err = write_file_atomic(busy, "two", 0644, &replaced);
  EXPECT_NE(err.find("cannot rename over " + busy), std::string::npos) << err;
  EXPECT_FALSE(replaced);
}

TEST(WriteFileAtomic, KillNineNeverLeavesATornFile) {
  TempDir dir;
  const std::string path = dir / "data";
  ASSERT_EQ(write_file_atomic(path, content(0)), "");
  std::mt19937 rng(7);
  for (int round = 0; round < 12; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (int k = 1;; ++k)
        if (!write_file_atomic(path, content(k)).empty()) ::_exit(3);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 40000));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer failed: status " << status;
    EXPECT_TRUE(is_whole(slurp(path))) << "round " << round;
  }
}

TEST(ReadFileChecked, EnforcesTheLimitAndTheOwner) {
  TempDir dir;
  const std::string path = dir / "f";
  ASSERT_EQ(write_file_atomic(path, "12345"), "");
  EXPECT_TRUE(read_file_checked(path, 5));
  EXPECT_EQ(read_file_checked(path, 5).data, "12345");
  EXPECT_FALSE(read_file_checked(path, 4));
  EXPECT_TRUE(read_file_checked(path, 5, ::getuid()));
  const FileRead wrong = read_file_checked(path, 5, ::getuid() + 1);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error.find("owned by uid"), std::string::npos) << wrong.error;
}

TEST(ParentDir, HandlesRootAndRelativePaths) {
  EXPECT_EQ(parent_dir("/a/b"), "/a");
  EXPECT_EQ(parent_dir("/b"), "/");
  EXPECT_EQ(parent_dir("b"), ".");
}

}  // namespace
}  // namespace pollux

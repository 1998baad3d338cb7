// The spool's creation (spool_setup.h), in a temporary directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "io/spool_setup.h"

namespace pollux::sched {
namespace {

class SpoolSetupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/pollux-spool-setup-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    top_ = dir;
  }
  void TearDown() override { std::system(("rm -rf '" + top_ + "'").c_str()); }
  static unsigned mode(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  }
  std::string top_;
};

TEST_F(SpoolSetupTest, CreatesTheSpoolAndItsParentsWorldWritableAndSticky) {
  const std::string dir = top_ + "/a/b/spool";
  const SpoolSetup s = prepare_spool(dir);
  EXPECT_FALSE(s.error);
  EXPECT_EQ(s.message, "created the spool " + dir + " (mode 1777)");
  EXPECT_EQ(mode(dir), 01777u);
  EXPECT_NE(mode(top_ + "/a/b"), 0u);
  const SpoolSetup again = prepare_spool(dir);
  EXPECT_FALSE(again.error);
  EXPECT_EQ(again.message, "") << "as it should be: nothing to say";
}

TEST_F(SpoolSetupTest, AnExistingDirectoryOfAnotherModeIsLeftAndNoted) {
  const std::string dir = top_ + "/spool";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  const SpoolSetup s = prepare_spool(dir);
  EXPECT_FALSE(s.error);
  EXPECT_EQ(s.message, dir + " is mode 755, not 1777 (world-writable, sticky): jobs may be unable to write their "
                             "hints, or able to remove each other's");
  EXPECT_EQ(mode(dir), 0755u);
}

TEST_F(SpoolSetupTest, AFileInItsPlaceIsAnError) {
  const std::string file = top_ + "/spool";
  std::ofstream(file) << "x";
  const SpoolSetup s = prepare_spool(file);
  EXPECT_TRUE(s.error);
  EXPECT_EQ(s.message, "pollux_spool_dir=" + file + " is not a directory: no job's hint can be read");
}

TEST_F(SpoolSetupTest, ASpoolThatCannotBeCreatedIsAnError) {
  const std::string file = top_ + "/file";
  std::ofstream(file) << "x";
  const SpoolSetup s = prepare_spool(file + "/spool");
  EXPECT_TRUE(s.error);
  EXPECT_EQ(s.message.rfind("cannot create the spool " + file + "/spool: ", 0), 0u) << s.message;
}

}  // namespace
}  // namespace pollux::sched

// The spool's space (spool_space.h): what statvfs says of a real directory,
// and the log lines when the spool fills up, has room again or cannot be
// examined, each said once.
#include <gtest/gtest.h>

#include <cstdlib>

#include "io/spool_space.h"
#include "pollux/hint.h"

namespace pollux::sched {
namespace {

TEST(SpoolSpace, ARealDirectoryHasItsFreeSpace) {
  const SpoolSpace s = spool_space("/");
  ASSERT_TRUE(s.known) << s.error;
  EXPECT_EQ(s.full, s.free_bytes < kHintMaxBytes || (s.inodes_counted && s.free_inodes < 2));
  const SpoolSpace missing = spool_space("/nonexistent/pollux-spool");
  EXPECT_FALSE(missing.known);
  EXPECT_EQ(missing.error, "No such file or directory");
}

SpoolSpace space(bool full, unsigned long long bytes = 1 << 20, unsigned long long inodes = 100) {
  SpoolSpace s;
  s.known = true;
  s.full = full;
  s.free_bytes = bytes;
  s.free_inodes = inodes;
  s.inodes_counted = true;
  return s;
}

TEST(SpoolSpace, AChangeIsSaidOnce) {
  const std::string dir = "/var/spool/pollux";
  bool is_error = false;
  EXPECT_EQ(spool_space_change(SpoolSpace{}, space(false), dir, &is_error), "") << "first seen with room";
  EXPECT_EQ(spool_space_change(space(false), space(true, 4096, 1), dir, &is_error),
            "the spool /var/spool/pollux is full (4096 bytes, 1 inodes free): agents cannot write their hints, and "
            "jobs without one run as moldable (cap=spool-full)");
  EXPECT_TRUE(is_error);
  EXPECT_EQ(spool_space_change(space(true, 4096), space(true, 0), dir), "") << "still full: said once";
  EXPECT_NE(spool_space_change(SpoolSpace{}, space(true, 0), dir, &is_error).find(" is full "), std::string::npos)
      << "full from the start";
  EXPECT_EQ(spool_space_change(space(true), space(false), dir, &is_error),
            "the spool /var/spool/pollux has room again: agents can write their hints");
  EXPECT_FALSE(is_error);
  EXPECT_EQ(spool_space_change(space(false, 1 << 30), space(false, 1 << 20), dir), "") << "free space moving";
  SpoolSpace gone;
  gone.error = "No such file or directory";
  EXPECT_EQ(spool_space_change(space(false), gone, dir, &is_error),
            "cannot examine the spool /var/spool/pollux (statvfs: No such file or directory)");
  EXPECT_TRUE(is_error);
  EXPECT_EQ(spool_space_change(gone, gone, dir), "");
  EXPECT_EQ(spool_space_change(gone, space(false), dir), "the spool /var/spool/pollux can be examined again");
}

}  // namespace
}  // namespace pollux::sched

// log_safe(): untrusted text in slurmctld's log stays on one line, short.
#include <gtest/gtest.h>

#include <string>

#include "sched/log_safe.h"

namespace pollux::sched {
namespace {

TEST(LogSafe, PrintableAsciiIsUnchanged) {
  EXPECT_EQ(log_safe("JobId=7: /spool/7.hint.yaml: line 1: version: 'x' is not an integer"),
            "JobId=7: /spool/7.hint.yaml: line 1: version: 'x' is not an integer");
  EXPECT_EQ(log_safe(""), "");
}

TEST(LogSafe, ControlBytesAndNonAsciiAreEscaped) {
  EXPECT_EQ(log_safe("a\nb\rc\td\\e"), "a\\nb\\rc\\td\\\\e");
  EXPECT_EQ(log_safe(std::string("\0\x1b[31m\x7f\xc3\xa9", 9)), "\\x00\\x1b[31m\\x7f\\xc3\\xa9");
  for (int c = 0; c < 256; ++c) {
    const std::string out = log_safe(std::string(1, static_cast<char>(c)));
    for (char o : out) EXPECT_TRUE(o >= 0x20 && o < 0x7f) << c;
  }
}

TEST(LogSafe, LongTextIsCutAtAnEscapeAndSaysHowLongItWas) {
  const std::string big(5000, 'x');
  const std::string out = log_safe(big, 100);
  EXPECT_EQ(out.size(), 100u);
  const std::string marker = "...(5000 bytes)";
  EXPECT_EQ(out, std::string(100 - marker.size(), 'x') + marker);
  // Never in the middle of an escape.
  const std::string nl(200, '\n');
  const std::string cut = log_safe(nl, 64);
  EXPECT_LE(cut.size(), 64u);
  EXPECT_EQ(cut.substr(0, cut.find("...")).size() % 2, 0u);
  EXPECT_NE(cut.find("...(200 bytes)"), std::string::npos);
  // Exactly at the limit: not cut.
  EXPECT_EQ(log_safe(std::string(64, 'y'), 64), std::string(64, 'y'));
  EXPECT_LE(log_safe(big).size(), kLogSafeMax);
}

}  // namespace
}  // namespace pollux::sched

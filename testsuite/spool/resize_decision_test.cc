// The resize decision file (pollux/resize_decision.h): what sched/pollux
// writes before its signal and the agent's handler reads.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "pollux/resize_decision.h"
#include "spool_test_util.h"

namespace pollux {
namespace {

using test::slurp;
using test::TempDir;

TEST(ResizeDecision, WrittenAtomicallyAndParsedBack) {
  TempDir dir;
  ASSERT_EQ(write_resize_decision(dir.path(), 4242, ResizeDecision{3, 1795680333123}), "");
  const std::string text = slurp(dir / "4242.resize");
  EXPECT_EQ(text, "resize 3 1795680333123\n");
  EXPECT_EQ(resize_decision_path(dir.path() + "/", 4242), dir / "4242.resize");
  ResizeDecision d;
  ASSERT_TRUE(parse_resize_decision(text.data(), text.size(), &d));
  EXPECT_EQ(d.restart_count, 3);
  EXPECT_EQ(d.time_ms, 1795680333123);
  EXPECT_FALSE(d.cancel);
}

TEST(ResizeDecision, ACancelIsWrittenAndParsedBackAsOne) {
  TempDir dir;
  ASSERT_EQ(write_resize_decision(dir.path(), 4242, ResizeDecision{3, 1795680333999, true}), "");
  const std::string text = slurp(dir / "4242.resize");
  EXPECT_EQ(text, "cancel 3 1795680333999\n");
  ResizeDecision d;
  ASSERT_TRUE(parse_resize_decision(text.data(), text.size(), &d));
  EXPECT_EQ(d.restart_count, 3);
  EXPECT_EQ(d.time_ms, 1795680333999);
  EXPECT_TRUE(d.cancel);
}

TEST(ResizeDecision, AnythingMalformedIsNotADecision) {
  for (const std::string bad : {"", "resize", "resize 3", "resize x 1", "resize 3 1x\n", "Resize 3 1\n",
                                "resize -3 1\n", "resize 70000 1\n", "resize 3 99999999999999999999\n", "cancel 3", "cancel x 1\n",
                                "Cancel 3 1\n", "cancelled 3 1\n"}) {
    ResizeDecision d;
    EXPECT_FALSE(parse_resize_decision(bad.data(), bad.size(), &d)) << bad;
  }
}

TEST(SignalNumber, NamesAndNumbersOfCatchableSignals) {
  EXPECT_EQ(signal_number("USR1"), SIGUSR1);
  EXPECT_EQ(signal_number("SIGUSR2"), SIGUSR2);
  EXPECT_EQ(signal_number("URG"), SIGURG);
  EXPECT_EQ(signal_number("40"), 40);
  for (const char* bad : {"", "KILL", "9", "19", "0", "65", "USR3", "1e1", "-10"}) EXPECT_EQ(signal_number(bad), 0) << bad;
  EXPECT_EQ(signal_name(SIGUSR1), "USR1");
  EXPECT_EQ(signal_name(40), "40");
}

}  // namespace
}  // namespace pollux

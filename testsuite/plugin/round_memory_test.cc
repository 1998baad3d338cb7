// The rounds' memory across slurmctld restarts (round_memory.h).
#include "io/round_memory.h"

#include <gtest/gtest.h>

namespace pollux::sched {
namespace {

TEST(RoundMemory, RoundTrips) {
  const RoundMemory m{1700000123.25, "pollux-mt19937_64 1 2 3"};
  const auto back = parse_round_memory(format_round_memory(m));
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(back->last_periodic, m.last_periodic);
  EXPECT_EQ(back->search_state, m.search_state);
  EXPECT_TRUE(parse_round_memory(format_round_memory({5, ""})));
}

TEST(RoundMemory, RefusesAnythingElse) {
  const std::string good = format_round_memory({1700000000, "s"});
  for (const std::string& bad :
       {std::string(), std::string("pollux_rounds 2\nlast_periodic=1\nsearch=s\n"), good.substr(0, good.size() - 1),
        std::string("pollux_rounds 1\nlast_periodic=x\nsearch=s\n"),
        std::string("pollux_rounds 1\nlast_periodic=-5\nsearch=s\n"),
        std::string("pollux_rounds 1\nlast_periodic=nan\nsearch=s\n"),
        std::string("pollux_rounds 1\nsearch=s\nlast_periodic=1\n"), good + "more\n"})
    EXPECT_FALSE(parse_round_memory(bad)) << bad;
}

// The next periodic round comes when it was due, as without the restart.
TEST(RoundMemory, FirstRoundWhenItWasDue) {
  const RoundMemory m{1000, ""};
  EXPECT_DOUBLE_EQ(first_round_delay(m, 1001, 3), 2);    // restarted within an interval
  EXPECT_DOUBLE_EQ(first_round_delay(m, 1030, 3), 0);    // down longer: overdue
  EXPECT_DOUBLE_EQ(first_round_delay(std::nullopt, 1001, 3), 3);  // none: as if one had just run
  EXPECT_DOUBLE_EQ(first_round_delay(m, 900, 3), 3);     // a clock set back
}

}  // namespace
}  // namespace pollux::sched

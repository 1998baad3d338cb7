// The micro-batch limit learnt from running out of memory (memory_limit.h):
// the rule and the file.
#include "memory_limit.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using pollux::agent_detail::emit_memory_limit;
using pollux::agent_detail::lowered_max_atomic;
using pollux::agent_detail::MemoryLimit;
using pollux::agent_detail::parse_memory_limit;

TEST(MemoryLimit, LargestRunBelowElseOneLess) {
  EXPECT_EQ(lowered_max_atomic(64, 4, 1, 64), 4);    // 4 ran: known to fit
  EXPECT_EQ(lowered_max_atomic(64, 64, 1, 64), 63);  // 64 ran before, not now
  EXPECT_EQ(lowered_max_atomic(64, 0, 1, 64), 63);   // nothing ran
  EXPECT_EQ(lowered_max_atomic(64, 100, 1, 128), 63);
  EXPECT_EQ(lowered_max_atomic(5, 0, 4, 64), 4);     // never below m_min
  EXPECT_EQ(lowered_max_atomic(100, 0, 1, 64), 64);  // never above m_max
}

TEST(MemoryLimit, SmallestHasNothingSmaller) {
  try {
    lowered_max_atomic(4, 0, 4, 64);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("micro-batch 4 ran out of memory and it is the job's smallest (min_atomic 4): "
                                         "nothing smaller to try"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(lowered_max_atomic(1, 0, 1, 1), std::runtime_error);
}

TEST(MemoryLimit, FileRoundTrip) {
  const MemoryLimit m{16, 64, 4242};
  const MemoryLimit back = parse_memory_limit(emit_memory_limit(m));
  EXPECT_EQ(back.max_atomic, 16);
  EXPECT_EQ(back.out_of_memory_at, 64);
  EXPECT_EQ(back.job_id, 4242u);
}

TEST(MemoryLimit, BadFilesAreNamed) {
  const auto error = [](const std::string& text) {
    try {
      parse_memory_limit(text);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(parsed)");
  };
  EXPECT_EQ(error("max_atomic: many\njob_id: 1\n"), "max_atomic: 'many' is not a count");
  EXPECT_EQ(error("max_atomic: 0\njob_id: 1\n"), "max_atomic: 0 is out of range");
  EXPECT_EQ(error("max_atomic: 8\n"), "no job_id");
  EXPECT_EQ(error("job_id: 8\n"), "no max_atomic");
  EXPECT_EQ(error("max_atomic: 8\njob_id: 1\nsize: 3\n"), "unknown key 'size'");
  EXPECT_EQ(error("max_atomic 8\n"), "malformed line 'max_atomic 8'");
  EXPECT_EQ(error("max_atomic: -3\njob_id: 1\n"), "max_atomic: '-3' is not a count");
  EXPECT_EQ(error(""), "no max_atomic");
}

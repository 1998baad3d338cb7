// RootMessage: what rank 0 decides for every rank survives the trip
// byte for byte whatever its strings hold, and anything else is refused.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "pollux/agent_backend.h"
#include "pollux/checkpoint_store.h"
#include "root_message.h"

using pollux::agent_detail::decode;
using pollux::agent_detail::encode;
using pollux::agent_detail::RootMessage;
using pollux::agent_detail::share_from_root;

namespace {

RootMessage sample() {
  RootMessage m;
  // What the old string protocol would have misread: a marker at the
  // start, a newline in a directory name, bytes of any value.
  m.dir = "!superseded:/ckpt\nwith a newline";
  m.state = std::string("step: 12\n\0\xff", 11);
  m.reason = "superseded:";
  m.atomic_batch = 64;
  m.accum_steps = 3;
  return m;
}

}  // namespace

TEST(RootMessage, RoundTripsEveryKindAndField) {
  for (const auto kind : {RootMessage::Kind::kOk, RootMessage::Kind::kFailed, RootMessage::Kind::kSuperseded}) {
    RootMessage m = sample();
    m.kind = kind;
    const RootMessage back = decode(encode(m));
    EXPECT_EQ(back.kind, kind);
    EXPECT_EQ(back.dir, m.dir);
    EXPECT_EQ(back.state, m.state);
    EXPECT_EQ(back.reason, m.reason);
    EXPECT_EQ(back.atomic_batch, 64);
    EXPECT_EQ(back.accum_steps, 3);
  }
  EXPECT_TRUE(decode(encode(RootMessage{})).ok());
  EXPECT_TRUE(decode(encode(RootMessage{})).dir.empty());
}

TEST(RootMessage, RefusesWhatEncodeDidNotWrite) {
  const std::string good = encode(sample());
  for (std::size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW(decode(good.substr(0, n)), std::runtime_error) << "cut at " << n;
  EXPECT_THROW(decode(good + "x"), std::runtime_error);
  std::string bad_kind = good;
  bad_kind[1] = 7;
  EXPECT_THROW(decode(bad_kind), std::runtime_error);
  std::string bad_version = good;
  bad_version[0] = 2;
  EXPECT_THROW(decode(bad_version), std::runtime_error);
  // The old protocol's plain strings are not messages.
  EXPECT_THROW(decode("!no space left"), std::runtime_error);
  EXPECT_THROW(decode("/ckpt/ckpt-1\nstep: 1"), std::runtime_error);
}

TEST(RootMessage, SharedFromRootAndSupersededStopsTheRank) {
  const auto comm = pollux::make_local_communicator();
  const RootMessage got = share_from_root(*comm, 0, sample());
  EXPECT_EQ(got.dir, sample().dir);
  EXPECT_EQ(got.state, sample().state);
  RootMessage failed;
  failed.kind = RootMessage::Kind::kFailed;
  failed.reason = "disk full";
  EXPECT_EQ(share_from_root(*comm, 0, failed).reason, "disk full");
  RootMessage superseded;
  superseded.kind = RootMessage::Kind::kSuperseded;
  superseded.reason = "restart 3 owns the store";
  try {
    share_from_root(*comm, 0, superseded);
    FAIL() << "no SupersededError";
  } catch (const pollux::SupersededError& e) {
    EXPECT_STREQ(e.what(), "restart 3 owns the store");
  }
}

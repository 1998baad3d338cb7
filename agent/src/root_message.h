// What rank 0 decides for every rank, in one broadcast: whether a
// checkpoint directory was begun or committed, what restore() found, the
// batch configuration re-picked after a restore. One encoded message type
// instead of strings with ad-hoc markers: a field cannot be mistaken for a
// marker, and a malformed message is an error, not a wrong value.
#ifndef POLLUX_ROOT_MESSAGE_H
#define POLLUX_ROOT_MESSAGE_H

#include <string>
#include <string_view>

namespace pollux {
class Communicator;
}

namespace pollux::agent_detail {

struct RootMessage {
  enum class Kind : unsigned char {
    kOk = 0,          ///< done; `dir`, `state`, `atomic_batch`, `accum_steps` as the exchange says
    kFailed = 1,      ///< not done, `reason` says why; every rank carries on
    kSuperseded = 2,  ///< a later run owns the checkpoints (SupersededError): every rank stops
  };
  Kind kind = Kind::kOk;
  std::string reason;
  std::string dir;
  std::string state;
  int atomic_batch = 0;
  int accum_steps = 0;

  bool ok() const { return kind == Kind::kOk; }
};

/// Bytes a message travels as: a version byte, the kind, the two integers
/// and the three strings, each length-prefixed.
std::string encode(const RootMessage& m);
/// Throws std::runtime_error naming what is wrong if `bytes` is not a
/// message encode() wrote.
RootMessage decode(std::string_view bytes);

/// Rank 0's `m` on every rank (a collective broadcast; other ranks' `m` is
/// ignored). Throws SupersededError on every rank for kSuperseded.
RootMessage share_from_root(Communicator& comm, int rank, const RootMessage& m);

}  // namespace pollux::agent_detail

#endif

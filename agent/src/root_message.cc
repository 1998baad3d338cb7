#include "root_message.h"

#include <cstdint>
#include <stdexcept>

#include "pollux/agent_backend.h"
#include "pollux/checkpoint_store.h"

namespace pollux::agent_detail {

namespace {

constexpr unsigned char kVersion = 1;

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_string(std::string& out, const std::string& s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  unsigned char byte(const char* what) {
    need(1, what);
    return static_cast<unsigned char>(b_[pos_++]);
  }
  std::uint32_t u32(const char* what) {
    need(4, what);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t(static_cast<unsigned char>(b_[pos_++])) << (8 * i);
    return v;
  }
  std::string string(const char* what) {
    const std::uint32_t n = u32(what);
    need(n, what);
    std::string s(b_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  void need(std::size_t n, const char* what) const {
    if (b_.size() - pos_ < n) throw std::runtime_error(std::string("rank 0's message is cut short in its ") + what);
  }
  std::string_view b_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string encode(const RootMessage& m) {
  std::string out;
  out.push_back(static_cast<char>(kVersion));
  out.push_back(static_cast<char>(m.kind));
  put_u32(out, static_cast<std::uint32_t>(m.atomic_batch));
  put_u32(out, static_cast<std::uint32_t>(m.accum_steps));
  put_string(out, m.reason);
  put_string(out, m.dir);
  put_string(out, m.state);
  return out;
}

RootMessage decode(std::string_view bytes) {
  Reader r(bytes);
  if (const unsigned char v = r.byte("version"); v != kVersion)
    throw std::runtime_error("rank 0's message has version " + std::to_string(v) + ", this rank reads " +
                             std::to_string(kVersion));
  RootMessage m;
  const unsigned char kind = r.byte("kind");
  if (kind > static_cast<unsigned char>(RootMessage::Kind::kSuperseded))
    throw std::runtime_error("rank 0's message has an unknown kind " + std::to_string(kind));
  m.kind = static_cast<RootMessage::Kind>(kind);
  m.atomic_batch = static_cast<int>(r.u32("atomic batch"));
  m.accum_steps = static_cast<int>(r.u32("accumulation steps"));
  m.reason = r.string("reason");
  m.dir = r.string("directory");
  m.state = r.string("state");
  if (!r.done()) throw std::runtime_error("rank 0's message has trailing bytes");
  return m;
}

RootMessage share_from_root(Communicator& comm, int rank, const RootMessage& m) {
  std::string bytes = rank == 0 ? encode(m) : std::string();
  comm.broadcast(bytes, 0);
  RootMessage got = decode(bytes);
  if (got.kind == RootMessage::Kind::kSuperseded) throw SupersededError(got.reason);
  return got;
}

}  // namespace pollux::agent_detail

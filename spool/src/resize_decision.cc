// The resize decision file (see pollux/resize_decision.h).
#include "pollux/resize_decision.h"

#include <csignal>
#include <cstring>

#include "pollux/atomic_file.h"

namespace pollux {
namespace {

constexpr char kWord[] = "resize ";
constexpr char kCancelWord[] = "cancel ";

// A non-negative decimal number at text[*at..], then one space or newline.
bool number(const char* text, std::size_t size, std::size_t* at, long long* out) noexcept {
  long long v = 0;
  std::size_t i = *at;
  if (i >= size || text[i] < '0' || text[i] > '9') return false;
  for (; i < size && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (v > (9007199254740992LL - 9) / 10) return false;
    v = v * 10 + (text[i] - '0');
  }
  if (i < size && text[i] != ' ' && text[i] != '\n') return false;
  *at = i + 1;
  *out = v;
  return true;
}

}  // namespace

std::string resize_decision_path(const std::string& spool_dir, std::uint32_t job_id) {
  std::string dir = spool_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/" + std::to_string(job_id) + ".resize";
}

std::string write_resize_decision(const std::string& spool_dir, std::uint32_t job_id,
                                  const ResizeDecision& d) noexcept {
  try {
    return write_file_atomic(resize_decision_path(spool_dir, job_id),
                             (d.cancel ? kCancelWord : kWord) + std::to_string(d.restart_count) + " " +
                                 std::to_string(d.time_ms) + "\n",
                             0644);
  } catch (const std::exception& e) {
    return std::string("cannot write the resize decision: ") + e.what();
  }
}

bool parse_resize_decision(const char* text, std::size_t size, ResizeDecision* out) noexcept {
  const std::size_t word = sizeof kWord - 1;
  static_assert(sizeof kWord == sizeof kCancelWord, "one length for both words");
  if (size < word) return false;
  const bool cancel = std::memcmp(text, kCancelWord, word) == 0;
  if (!cancel && std::memcmp(text, kWord, word) != 0) return false;
  std::size_t at = word;
  long long restart = 0, ms = 0;
  if (!number(text, size, &at, &restart) || !number(text, size, &at, &ms) || restart > 65535) return false;
  out->restart_count = static_cast<int>(restart);
  out->time_ms = ms;
  out->cancel = cancel;
  return true;
}

int signal_number(std::string_view s) noexcept {
  if (s.substr(0, 3) == "SIG") s.remove_prefix(3);
  if (s == "USR1") return SIGUSR1;
  if (s == "USR2") return SIGUSR2;
  if (s == "URG") return SIGURG;
  if (s.empty() || s.size() > 2) return 0;
  int n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  return n >= 1 && n <= 64 && n != SIGKILL && n != SIGSTOP ? n : 0;
}

std::string signal_name(int sig) {
  if (sig == SIGUSR1) return "USR1";
  if (sig == SIGUSR2) return "USR2";
  if (sig == SIGURG) return "URG";
  return std::to_string(sig);
}

}  // namespace pollux

// Helpers shared by the fuzz targets: a scratch directory, files written
// from the input, and invariants that abort (libFuzzer then reports the
// input as a finding).
#ifndef POLLUX_FUZZ_UTIL_H
#define POLLUX_FUZZ_UTIL_H

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace pollux::fuzz {

/// The input as text.
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Stops the run with `what` when an invariant does not hold.
inline void require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

/// A directory of this process's own, made on first use (left behind: the
/// fuzzer's process ends by exit(), and it holds a few small files).
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string t = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/pollux-fuzz.XXXXXX";
    require(::mkdtemp(t.data()) != nullptr, "mkdtemp");
    return t;
  }();
  return dir;
}

/// Replaces `path` with `bytes`.
inline void write_file(const std::string& path, std::string_view bytes) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  require(fd >= 0, "cannot create " + path);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    require(n > 0, "cannot write " + path);
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

/// A log line about untrusted input: printable ASCII only (no newline, no
/// terminal escape), at most `max` bytes, naming `path`.
inline void require_one_line(const std::string& line, const std::string& path, std::size_t max) {
  for (const char c : line) require(c >= 0x20 && c < 0x7f, "a control or non-ASCII byte in: " + line);
  require(line.size() <= max, "longer than " + std::to_string(max) + " bytes: " + line);
  require(line.find(path) != std::string::npos, "does not name " + path + ": " + line);
}

}  // namespace pollux::fuzz

#endif  // POLLUX_FUZZ_UTIL_H

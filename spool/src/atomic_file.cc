// Atomic replacement and checked reading of files (see pollux/atomic_file.h).
#include "pollux/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace pollux {
namespace {

std::string sys_error(const char* what, const std::string& path, int err) {
  return std::string(what) + " " + path + ": " + std::strerror(err);
}

// Closes a descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

std::string write_all(int fd, std::string_view data, const std::string& path) {
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error("cannot write", path, errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string fsync_path(const std::string& path) noexcept {
  try {
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) return sys_error("cannot open", path, errno);
    if (::fsync(f.fd) != 0) return sys_error("cannot fsync", path, errno);
    return {};
  } catch (...) {
    return "out of memory";
  }
}

std::string fsync_parent(const std::string& path) noexcept {
  try {
    return fsync_path(parent_dir(path));
  } catch (...) {
    return "out of memory";
  }
}

std::string write_file_atomic(const std::string& path, std::string_view data, mode_t mode,
                              bool* replaced) noexcept {
  if (replaced != nullptr) *replaced = false;
  try {
    const std::string dir = parent_dir(path);
    const auto slash = path.find_last_of('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    // Hidden, unique temporary name in the same directory (rename must not
    // cross file systems); mkstemp opens it O_EXCL, so nothing pre-planted
    // by someone else can be followed.
    std::string tmp = dir + "/." + base + ".tmp.XXXXXX";
    std::vector<char> name(tmp.begin(), tmp.end());
    name.push_back('\0');
    Fd f{::mkostemp(name.data(), O_CLOEXEC)};
    if (f.fd < 0) return sys_error("cannot create a temporary file in", dir, errno);
    tmp.assign(name.data());
    std::string err = write_all(f.fd, data, tmp);
    if (err.empty() && ::fchmod(f.fd, mode) != 0) err = sys_error("cannot chmod", tmp, errno);
    if (err.empty() && ::fsync(f.fd) != 0) err = sys_error("cannot fsync", tmp, errno);
    if (err.empty() && ::close(f.release()) != 0) err = sys_error("cannot close", tmp, errno);
    if (err.empty() && ::rename(tmp.c_str(), path.c_str()) != 0)
      err = sys_error("cannot rename over", path, errno);
    if (!err.empty()) {
      ::unlink(tmp.c_str());
      return err;
    }
    if (replaced != nullptr) *replaced = true;
    if (err = fsync_path(dir); !err.empty())
      return path + " was replaced, but " + err + ": the change may not survive a power loss";
    return {};
  } catch (...) {
    return "out of memory writing " + path;
  }
}

FileRead read_file_checked(const std::string& path, std::size_t max_bytes,
                           std::optional<uid_t> owner) noexcept {
  FileRead r;
  try {
    // O_NONBLOCK: opening a FIFO planted under the expected name must not
    // stall the reader; fstat() below then refuses it.
    Fd f{::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
    if (f.fd < 0) {
      r.error = errno == ELOOP ? path + ": is a symbolic link" : sys_error("cannot open", path, errno);
      return r;
    }
    struct stat st;
    if (::fstat(f.fd, &st) != 0) {
      r.error = sys_error("cannot stat", path, errno);
      return r;
    }
    if (!S_ISREG(st.st_mode)) {
      r.error = path + ": not a regular file";
      return r;
    }
    if (owner && st.st_uid != *owner) {
      r.error = path + ": owned by uid " + std::to_string(st.st_uid) + ", expected uid " +
                std::to_string(*owner);
      return r;
    }
    if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
      r.error = path + ": " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                std::to_string(max_bytes);
      return r;
    }
    // Read at most max_bytes + 1: the file may grow after fstat().
    r.data.resize(max_bytes + 1);
    std::size_t got = 0;
    while (got < r.data.size()) {
      const ssize_t n = ::read(f.fd, &r.data[got], r.data.size() - got);
      if (n < 0) {
        if (errno == EINTR) continue;
        r.error = sys_error("cannot read", path, errno);
        r.data.clear();
        return r;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got > max_bytes) {
      r.error = path + ": more than the limit of " + std::to_string(max_bytes) + " bytes";
      r.data.clear();
      return r;
    }
    r.data.resize(got);
    return r;
  } catch (...) {
    r.data.clear();
    r.error = "out of memory reading " + path;
    return r;
  }
}

}  // namespace pollux

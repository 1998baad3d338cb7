// Atomically committed checkpoint directories (see pollux/checkpoint_store.h).
#include "pollux/checkpoint_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "pollux/atomic_file.h"

namespace pollux {
namespace {

constexpr const char* kLatest = "latest";
constexpr const char* kPrefix = "ckpt-";
constexpr const char* kTmpPrefix = ".tmp-ckpt-";
constexpr const char* kOwner = "owner";
constexpr const char* kNotCommitted = "; not committed: the previous checkpoint stays the latest";

std::runtime_error sys_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A checkpoint name as commit() writes it: ckpt-<digits>-<hex>, no slashes.
bool valid_name(const std::string& n) {
  if (!starts_with(n, kPrefix) || n.size() > 64) return false;
  for (char c : n.substr(std::strlen(kPrefix)))
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  return true;
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

void remove_tree(const std::string& path) noexcept {
  ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

// fsync of every regular file and directory under `dir`, the directories
// last (their entries must be durable after the files' contents).
int fsync_entry(const char* path, const struct stat* st, int type, struct FTW*) {
  if (type != FTW_F && type != FTW_DP) return 0;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  const int rc = ::fsync(fd);
  ::close(fd);
  (void)st;
  return rc;
}

std::string unique_suffix() {
  std::random_device rd;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06x", rd() & 0xffffffu);
  return buf;
}

}  // namespace

void make_directories(const std::string& path, unsigned mode) {
  if (path.empty()) throw std::runtime_error("empty directory name");
  std::string partial;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), mode) == 0) {
      // A new directory's entry is durable only once its parent is synced.
      if (std::string err = fsync_parent(partial); !err.empty()) throw std::runtime_error(err);
    } else if (errno != EEXIST) {
      throw sys_error("cannot create directory", partial);
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error("not a directory: " + path);
}

CheckpointStore::CheckpointStore(std::string root, long generation)
    : root_(std::move(root)), generation_(generation) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

long CheckpointStore::owner() const {
  const std::string path = root_ + "/" + kOwner;
  if (::access(path.c_str(), F_OK) != 0) return -1;
  const FileRead f = read_file_checked(path, 64);
  if (!f) throw std::runtime_error("checkpoint owner: " + f.error);
  char* end = nullptr;
  errno = 0;
  const long g = std::strtol(f.data.c_str(), &end, 10);
  if (end == f.data.c_str() || errno != 0 || g < 0 || (*end != '\n' && *end != '\0'))
    throw std::runtime_error(path + ": not a restart count: '" + f.data + "'");
  return g;
}

long CheckpointStore::check_owner() const {
  const long g = owner();
  if (g > generation_)
    throw SupersededError(root_ + " belongs to restart " + std::to_string(g) + " of the job, and this run is restart " +
                          std::to_string(generation_) + ": it was superseded (requeued while it still ran) and "
                          "stops; or the directory was left by an earlier job with the same id: move it away or "
                          "set POLLUX_CHECKPOINT_DIR");
  return g;
}

void CheckpointStore::claim() {
  make_directories(root_);
  if (check_owner() != generation_) {
    if (std::string err = write_file_atomic(root_ + "/" + kOwner, std::to_string(generation_) + "\n"); !err.empty())
      throw std::runtime_error(err);
  }
  claimed_ = true;
}

std::string CheckpointStore::begin(long long step) {
  if (!claimed_) claim();
  check_owner();  // before removing temporaries, which may be a later run's
  // Stale temporaries are from checkpoints that were interrupted.
  for (const std::string& n : list_dir(root_))
    if (starts_with(n, kTmpPrefix)) remove_tree(root_ + "/" + n);
  char name[64];
  std::snprintf(name, sizeof name, "%s%012lld-%s", kTmpPrefix, step, unique_suffix().c_str());
  const std::string tmp = root_ + "/" + name;
  if (::mkdir(tmp.c_str(), 0755) != 0) throw sys_error("cannot create checkpoint directory", tmp);
  return tmp;
}

std::string CheckpointStore::commit(const std::string& tmp_dir) {
  const auto slash = tmp_dir.find_last_of('/');
  const std::string tmp_name = tmp_dir.substr(slash + 1);
  if (parent_dir(tmp_dir) != root_ || !starts_with(tmp_name, kTmpPrefix))
    throw std::runtime_error("not a checkpoint being written in " + root_ + ": " + tmp_dir);
  const std::string name = kPrefix + tmp_name.substr(std::strlen(kTmpPrefix));
  const std::string final_dir = root_ + "/" + name;

  // The owner is checked again right before each step that a later run
  // must never see undone (the fsync of a large checkpoint takes long).
  const auto check_owner_or_drop = [this](const std::string& dir) {
    try {
      check_owner();
    } catch (const SupersededError&) {
      remove_tree(dir);
      throw;
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(e.what() + std::string(kNotCommitted));
    }
  };
  check_owner_or_drop(tmp_dir);
  // 1. Every byte written into the checkpoint is on disk.
  if (::nftw(tmp_dir.c_str(), fsync_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
    throw std::runtime_error(sys_error("cannot fsync checkpoint", tmp_dir).what() + std::string(kNotCommitted));
  // 2. It gets its final name (atomic), durably.
  check_owner_or_drop(tmp_dir);
  if (::rename(tmp_dir.c_str(), final_dir.c_str()) != 0)
    throw std::runtime_error(sys_error("cannot rename checkpoint to", final_dir).what() + std::string(kNotCommitted));
  if (std::string err = fsync_path(root_); !err.empty()) throw std::runtime_error(err + kNotCommitted);
  // 3. The pointer switches (atomic, durable). Until here `latest` names
  //    the previous checkpoint, which is untouched.
  const std::string pointer = root_ + "/" + kLatest;
  check_owner_or_drop(final_dir);
  bool switched = false;
  if (std::string err = write_file_atomic(pointer, name + "\n", 0644, &switched); !err.empty()) {
    if (!switched) throw std::runtime_error(err + kNotCommitted);
    // `latest` names the new checkpoint, but a power loss may bring back
    // the previous one: it is kept (step 4 is skipped).
    throw std::runtime_error("checkpoint " + final_dir + " is the latest, not durably (" + err +
                             "); the previous checkpoint is kept");
  }
  // 4. Only now is the previous checkpoint removed, unless a later run
  //    claimed the store meanwhile: it may be restoring from that one.
  try {
    check_owner();
  } catch (const SupersededError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("checkpoint " + final_dir + " is the latest, but older ones were not removed: " + e.what());
  }
  for (const std::string& n : list_dir(root_))
    if ((starts_with(n, kPrefix) && n != name) || starts_with(n, kTmpPrefix)) remove_tree(root_ + "/" + n);
  return final_dir;
}

void CheckpointStore::abort(const std::string& tmp_dir) noexcept {
  const auto slash = tmp_dir.find_last_of('/');
  if (slash != std::string::npos && starts_with(tmp_dir.substr(slash + 1), kTmpPrefix)) remove_tree(tmp_dir);
}

std::optional<std::string> CheckpointStore::latest() const {
  const std::string pointer = root_ + "/" + kLatest;
  if (::access(pointer.c_str(), F_OK) != 0) return std::nullopt;
  const FileRead f = read_file_checked(pointer, 256);
  if (!f) throw std::runtime_error("checkpoint pointer: " + f.error);
  std::string name = f.data;
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
  if (!valid_name(name)) throw std::runtime_error(pointer + ": not a checkpoint name: '" + name + "'");
  const std::string dir = root_ + "/" + name;
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error(pointer + " names " + dir + ", which is missing");
  return dir;
}

}  // namespace pollux

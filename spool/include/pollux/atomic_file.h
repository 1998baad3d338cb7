// Files that are replaced all at once, and files read as untrusted input.
//
// write_file_atomic() gives the guarantee every spool file and checkpoint
// of the project relies on: a reader sees either the previous content or
// the new one, never a mix, even if the writer is killed (kill -9) or the
// machine loses power half-way. It writes a temporary file in the same
// directory, fsyncs it, renames it over the target (atomic on POSIX file
// systems) and fsyncs the directory so that the rename itself is durable.
//
// All functions return an empty string on success, else a one-line reason
// naming the path, and never throw.
//
// write_file_atomic() can fail after its rename, in the directory's fsync
// alone: readers then already see the new content, which a power loss may
// still revert. Its message says so, and `replaced` tells the caller.
#ifndef POLLUX_ATOMIC_FILE_H
#define POLLUX_ATOMIC_FILE_H

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pollux {

/// Replaces `path` with `data` atomically; the file gets permission `mode`.
/// `*replaced` (when given) is set to whether `path` holds `data` now,
/// durably or not.
std::string write_file_atomic(const std::string& path, std::string_view data,
                              mode_t mode = 0644, bool* replaced = nullptr) noexcept;

/// fsync() of a file or directory (opened read-only).
std::string fsync_path(const std::string& path) noexcept;

/// fsync() of the directory that holds `path` (makes a rename durable).
std::string fsync_parent(const std::string& path) noexcept;

/// Parent directory of `path` ("." when it has none).
std::string parent_dir(const std::string& path);

/// A file read by read_file_checked().
struct FileRead {
  std::string data;
  std::string error;  ///< empty on success
  explicit operator bool() const noexcept { return error.empty(); }
};

/// Reads `path` as untrusted input: refuses symlinks (O_NOFOLLOW), anything
/// but a regular file (without blocking on a FIFO), files larger than
/// `max_bytes`, and, when `owner` is given, files not owned by that uid.
FileRead read_file_checked(const std::string& path, std::size_t max_bytes,
                           std::optional<uid_t> owner = std::nullopt) noexcept;

}  // namespace pollux

#endif  // POLLUX_ATOMIC_FILE_H

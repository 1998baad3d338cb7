// A directory of checkpoints where a checkpoint interrupted half-way never
// replaces the previous one.
//
//   <root>/latest                    "ckpt-000000001200-5f3a9c", replaced atomically
//   <root>/ckpt-000000001200-5f3a9c/ the committed checkpoint (complete, fsynced)
//   <root>/.tmp-ckpt-...             a checkpoint being written
//
// begin() creates a temporary directory; the writers fill it; commit()
// fsyncs every file and directory in it, renames it to its final name,
// switches `latest` with write_file_atomic() and only then removes older
// checkpoints and stale temporaries. A crash (kill -9, power loss) at any
// point leaves `latest` naming a complete checkpoint: the new one if the
// pointer switch was durable, else the previous one.
//
// The store is driven by one process (the agent's rank 0); other ranks
// only write into the directory begin() returned.
#ifndef POLLUX_CHECKPOINT_STORE_H
#define POLLUX_CHECKPOINT_STORE_H

#include <optional>
#include <string>

namespace pollux {

class CheckpointStore {
 public:
  /// `root` is created (with parents) on first use.
  explicit CheckpointStore(std::string root);

  /// Creates a fresh temporary directory for a checkpoint of `step`.
  /// Throws std::runtime_error naming the path on failure.
  std::string begin(long long step);
  /// Makes the checkpoint in `tmp_dir` durable and the latest; returns its
  /// final directory. Throws std::runtime_error naming the path on failure
  /// (the previous checkpoint then stays the latest).
  std::string commit(const std::string& tmp_dir);
  /// Removes a temporary directory that will not be committed.
  void abort(const std::string& tmp_dir) noexcept;

  /// Directory of the latest committed checkpoint; nullopt when there is
  /// none. Throws std::runtime_error if `latest` exists but is corrupt.
  std::optional<std::string> latest() const;

  const std::string& root() const noexcept { return root_; }

 private:
  std::string root_;
};

/// mkdir -p; throws std::runtime_error naming the path on failure.
void make_directories(const std::string& path, unsigned mode = 0755);

}  // namespace pollux

#endif  // POLLUX_CHECKPOINT_STORE_H

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
//
// Fencing: a run of a job is one generation (Slurm's restart count). When a
// node is cut off rather than dead, Slurm requeues the job while the old
// run's processes may still train. Each run claims the store
// (`<root>/owner`, its generation, replaced atomically) before it restores
// or writes; begin() and commit() refuse with SupersededError once a later
// generation owns the store, so a superseded run never replaces `latest`
// nor removes the new run's files. commit() checks again right before the
// rename, the pointer switch and the clean-up, not only before its long
// fsync. (A later run that claims the store in the instant between the
// last check and the pointer switch can still see one last checkpoint of
// the old run become the latest; it is complete, and the old run then
// stops without removing anything.)
#ifndef POLLUX_CHECKPOINT_STORE_H
#define POLLUX_CHECKPOINT_STORE_H

#include <optional>
#include <stdexcept>
#include <string>

namespace pollux {

/// A later run of the job owns the checkpoint store: this run is stale and
/// must stop training (it is not an ordinary checkpoint failure).
class SupersededError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CheckpointStore {
 public:
  /// `root` is created (with parents) on first use. `generation`: this
  /// run's restart count (see Fencing above).
  explicit CheckpointStore(std::string root, long generation = 0);

  /// Records that this generation owns the store, unless a later one does
  /// already (SupersededError). begin() claims it if nothing did before.
  /// Throws std::runtime_error naming the path on other failures.
  void claim();

  /// Creates a fresh temporary directory for a checkpoint of `step`.
  /// Throws SupersededError (see claim()), or std::runtime_error naming the
  /// path on failure.
  std::string begin(long long step);
  /// Makes the checkpoint in `tmp_dir` durable and the latest; returns its
  /// final directory. Throws SupersededError (the temporary directory is
  /// removed) when a later generation owns the store, or std::runtime_error
  /// naming the path on failure. The message says which case it is: not
  /// committed (the previous checkpoint stays the latest), or, when only
  /// the pointer's fsync failed, the new one is the latest but a power loss
  /// may bring back the previous one, which is then kept on disk.
  std::string commit(const std::string& tmp_dir);
  /// Removes a temporary directory that will not be committed.
  void abort(const std::string& tmp_dir) noexcept;

  /// Directory of the latest committed checkpoint; nullopt when there is
  /// none. Throws std::runtime_error if `latest` exists but is corrupt.
  std::optional<std::string> latest() const;

  const std::string& root() const noexcept { return root_; }

 private:
  /// The generation that owns the store; -1 when none has claimed it.
  long owner() const;
  /// owner(), after throwing SupersededError if a later generation it is.
  long check_owner() const;

  std::string root_;
  long generation_ = 0;
  bool claimed_ = false;
};

/// mkdir -p; throws std::runtime_error naming the path on failure.
void make_directories(const std::string& path, unsigned mode = 0755);

}  // namespace pollux

#endif  // POLLUX_CHECKPOINT_STORE_H

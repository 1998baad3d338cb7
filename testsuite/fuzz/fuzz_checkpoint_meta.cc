// The checkpoint directory's metadata files, read back after a requeue:
// the owner file (restart count) and the pointer to the latest
// checkpoint. The first byte picks the file, the rest is its content.
// Invariant: a pointer that is accepted names a directory inside the root.
#include <sys/stat.h>

#include <stdexcept>

#include "fuzz_util.h"
#include "pollux/checkpoint_store.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const std::string root = [] {
    const std::string r = pollux::fuzz::scratch_dir() + "/ckpt";
    ::mkdir(r.c_str(), 0755);
    ::mkdir((r + "/ckpt-00000000000000000007").c_str(), 0755);
    return r;
  }();
  const bool owner = (data[0] & 1) != 0;
  const std::string file = root + (owner ? "/owner" : "/latest");
  pollux::fuzz::write_file(file, pollux::fuzz::text(data + 1, size - 1));
  pollux::CheckpointStore store(root, 3);
  try {
    if (owner) {
      store.claim();  // reads the owner file, then writes its own generation unless a later one owns it
    } else if (const std::optional<std::string> dir = store.latest()) {
      pollux::fuzz::require(dir->rfind(root + "/", 0) == 0 && dir->find("/..") == std::string::npos &&
                                dir->find('/', root.size() + 1) == std::string::npos,
                            "latest() outside the root: " + *dir);
    }
  } catch (const std::exception&) {
    // rejected: the agent reports it and starts from scratch or stops
  }
  ::unlink(file.c_str());
  return 0;
}

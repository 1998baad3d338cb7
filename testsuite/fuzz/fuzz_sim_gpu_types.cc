// A pollux-sim cluster description (--gpu-types, what an administrator
// brings). Invariant: it is read, or rejected on one line naming the file.
#include "fuzz_util.h"
#include "gpu_types.h"
#include "input_error.h"

using namespace pollux::sim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = pollux::fuzz::scratch_dir() + "/cluster.csv";
  pollux::fuzz::write_file(path, pollux::fuzz::text(data, size));
  try {
    const std::vector<GpuType> types = read_gpu_types(path);
    pollux::fuzz::require(!types.empty(), "a cluster without GPU types");
    for (const GpuType& g : types) pollux::fuzz::require(g.nodes >= 1 && g.speed > 0, "a type without nodes or speed");
  } catch (const InputError& e) {
    const std::string why = e.what();
    pollux::fuzz::require(why.rfind(path + ":", 0) == 0, "does not name the file: " + why);
    pollux::fuzz::require(why.find('\n') == std::string::npos, "more than one line: " + why);
  }
  return 0;
}

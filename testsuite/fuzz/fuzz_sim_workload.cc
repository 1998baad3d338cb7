// A pollux-sim workload file (what an administrator brings), read against
// the shipped traces. Invariant: a rejection names the file, on one line.
#include "application.h"
#include "fuzz_util.h"
#include "input_error.h"
#include "workload.h"

using namespace pollux::sim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static AppCatalog catalog(POLLUX_FUZZ_TRACES);
  const std::string path = pollux::fuzz::scratch_dir() + "/workload.csv";
  pollux::fuzz::write_file(path, pollux::fuzz::text(data, size));
  try {
    const Workload w = read_workload(path, catalog);
    pollux::fuzz::require(!w.jobs.empty(), "a workload without jobs");
  } catch (const InputError& e) {
    const std::string why = e.what();
    pollux::fuzz::require(why.rfind(path + ":", 0) == 0, "does not name the file: " + why);
    pollux::fuzz::require(why.find('\n') == std::string::npos, "more than one line: " + why);
  }
  return 0;
}

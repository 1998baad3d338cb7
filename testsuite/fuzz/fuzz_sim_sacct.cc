// A site's sacct history for pollux-sim --sacct (what an administrator
// brings), read against the shipped traces. Invariants: a rejection names
// the file, on one line; an accepted history has jobs of at least one GPU,
// submitted at 0 or later, recorded ones lasting 0 or more seconds.
#include "application.h"
#include "fuzz_util.h"
#include "input_error.h"
#include "sacct.h"

using namespace pollux::sim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static AppCatalog catalog(POLLUX_FUZZ_TRACES);
  const std::string path = pollux::fuzz::scratch_dir() + "/history.sacct";
  pollux::fuzz::write_file(path, pollux::fuzz::text(data, size));
  try {
    SacctSummary sum;
    const Workload w = read_sacct(path, catalog, 1.0, &sum);
    pollux::fuzz::require(!w.jobs.empty(), "a history without jobs");
    pollux::fuzz::require(sum.modelled + sum.recorded == static_cast<int>(w.jobs.size()), "jobs miscounted");
    for (const WorkloadJob& j : w.jobs) {
      pollux::fuzz::require(j.num_replicas >= 1 && j.submit_time >= 0, "a job of no GPU or before the first");
      pollux::fuzz::require(!j.recorded || j.duration >= 0, "a negative duration");
      pollux::fuzz::require(j.recorded || catalog.has(j.application), "an unknown application");
    }
  } catch (const InputError& e) {
    const std::string why = e.what();
    pollux::fuzz::require(why.rfind(path + ":", 0) == 0, "does not name the file: " + why);
    pollux::fuzz::require(why.find('\n') == std::string::npos, "more than one line: " + why);
  }
  return 0;
}

// An application's trace files for pollux-sim (placements.csv,
// scalability.csv, validation-<B>.csv), read and then used as the
// simulator uses them: limits, batch splits, step times, gradient
// statistics. The input is the files' contents separated by lines "%%"
// (placements, scalability, validation-8, validation-16). Invariant: a
// rejection names a file of the application, on one line.
#include <sys/stat.h>

#include <cmath>

#include "application.h"
#include "fuzz_util.h"
#include "input_error.h"

using namespace pollux::sim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string root = [] {
    const std::string r = pollux::fuzz::scratch_dir() + "/traces";
    ::mkdir(r.c_str(), 0755);
    ::mkdir((r + "/toy").c_str(), 0755);
    return r;
  }();
  const char* files[] = {"placements.csv", "scalability.csv", "validation-8.csv", "validation-16.csv"};
  std::string_view rest = pollux::fuzz::text(data, size);
  for (const char* f : files) {
    const std::string path = root + "/toy/" + f;
    ::unlink(path.c_str());
    if (rest.data() == nullptr) continue;
    const auto sep = rest.find("\n%%\n");
    pollux::fuzz::write_file(path, rest.substr(0, sep));
    rest = sep == std::string_view::npos ? std::string_view() : rest.substr(sep + 4);
  }
  AppCatalog catalog(root);
  try {
    const Application& app = catalog.load("toy");
    (void)app.limits();
    for (int replicas : {1, 2, 3, 8, 64}) {
      (void)app.split_batch(app.init_batch(), replicas, false);
      (void)app.split_batch(app.max_batch(), replicas, true);
    }
    for (const std::vector<int>& counts : std::vector<std::vector<int>>{{1}, {2, 2}, {4, 0, 3}, {8, 8, 8, 8}})
      for (int local : {app.min_local_bsz(), app.max_local_bsz()}) {
        const StepTimes t = app.step_times(counts, local);
        pollux::fuzz::require(std::isfinite(t.step) && std::isfinite(t.sync), "step time not finite");
      }
    for (int epoch : {0, app.max_epochs() - 1}) {
      if (epoch < 0) continue;
      (void)app.epoch_progress(epoch);
      (void)app.grad_stats(app.init_batch(), epoch);
      (void)app.iterations(app.max_batch(), epoch);
    }
  } catch (const InputError& e) {
    const std::string why = e.what();
    pollux::fuzz::require(why.rfind(root + "/toy", 0) == 0, "does not name a file: " + why);
    pollux::fuzz::require(why.find('\n') == std::string::npos, "more than one line: " + why);
  }
  return 0;
}

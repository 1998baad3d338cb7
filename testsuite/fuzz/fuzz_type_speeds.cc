// The learnt GPU type speeds sched/pollux keeps in StateSaveLocation
// (plugin/io/type_speeds_file.h), read back at start. Invariants: a refusal is
// one printable line naming the file, and an accepted file formats back to
// itself and restores a learner without a crash.
#include <cmath>

#include "io/type_speeds_file.h"
#include "sched/log_safe.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pollux::sched;
  const std::string path = "/state/pollux_gpu_type_speeds";
  const ParsedTypeSpeeds r = parse_type_speeds(pollux::fuzz::text(data, size), path);
  if (!r.error.empty()) {
    pollux::fuzz::require_one_line(r.error, path, kLogSafeMax);
    return 0;
  }
  const std::string again = format_type_speeds(r.learnt);
  const ParsedTypeSpeeds back = parse_type_speeds(again, path);
  pollux::fuzz::require(back.error.empty() && back.learnt == r.learnt, "does not round-trip: " + again);
  GpuTypeSpeeds speeds;
  for (std::size_t t = 0; t < r.learnt.types.size(); ++t) speeds[r.learnt.types[t]] = r.learnt.seed[t];
  TypeSpeedLearner learner;
  learner.restore(r.learnt);
  const pollux::TypeRatios& ratios = learner.ratios(r.learnt.types, speeds);
  for (int a = 0; a < ratios.types(); ++a)
    for (int b = 0; b < ratios.types(); ++b) {
      const double x = ratios.grad_time_ratio(a, b);
      pollux::fuzz::require(std::isfinite(x) && x > 0, "a ratio that is not finite and positive");
    }
  return 0;
}

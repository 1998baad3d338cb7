// The nodes' boot times sched/pollux keeps in StateSaveLocation
// (sched/boot_times.h), read back at start. Invariants: a refusal is one
// printable line naming the file, and an accepted file formats back to
// itself and gives every node a finite boot time without a crash.
#include <cmath>

#include "sched/boot_times.h"
#include "sched/log_safe.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pollux::sched;
  const std::string path = "/state/pollux_boot_times";
  const ParsedBootTimes r = parse_boot_times(pollux::fuzz::text(data, size), path);
  if (!r.error.empty()) {
    pollux::fuzz::require_one_line(r.error, path, kLogSafeMax);
    return 0;
  }
  const std::string again = format_boot_times(r.learnt, r.booting);
  const ParsedBootTimes back = parse_boot_times(again, path);
  pollux::fuzz::require(back.error.empty() && format_boot_times(back.learnt, back.booting) == again,
                        "does not round-trip: " + again);
  BootTimes learner;
  learner.restore(r.learnt);
  Snapshot snap;
  for (const auto& [name, b] : r.learnt) {
    NodeSnapshot& n = snap.nodes.emplace_back();
    n.name = name;
    n.power = Power::kOff;
  }
  for (std::size_t i = 0; i < snap.nodes.size(); ++i) {
    const double e = learner.expected(snap, i);
    pollux::fuzz::require(std::isfinite(e) && e >= 0, "a boot time that is not finite and non-negative");
  }
  return 0;
}

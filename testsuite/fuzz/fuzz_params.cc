// SchedulerParameters as slurm.conf gives them to sched/pollux. Invariant:
// every rejected option is one printable line, capped.
#include "sched/log_safe.h"
#include "sched/params.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const pollux::sched::ParamsResult r = pollux::sched::parse_params(pollux::fuzz::text(data, size));
  for (const std::string& e : r.errors) pollux::fuzz::require_one_line(e, "", pollux::sched::kLogSafeMax);
  (void)pollux::sched::describe(r.params);
  (void)pollux::sched::policy_options(r.params);
  return 0;
}

// A hint file, as any user can write one, through everything sched/pollux
// does with it: parse_hint(), the HintReader on a spool (owner, type,
// size, job and uid checks, the rejection logged), the job's model and its
// speedup at every size the round may ask for, and the SystemComment view.
// Invariants: a hint that parses re-emits to text that parses to the same
// emitted text; every rejection is one printable line, capped, naming the
// file; the comment's state reads back as written.
#include <unistd.h>

#include <utility>

#include "sched/hints.h"
#include "sched/job_comment.h"
#include "sched/job_model.h"
#include "sched/log_safe.h"
#include "fuzz_util.h"
#include "pollux/hint.h"

using namespace pollux;
using namespace pollux::sched;

namespace {

// What the round does with a job's model.
void use_model(const std::optional<JobModel>& model) {
  const ElasticRange range{1, 4, 4};
  const SpeedupFn speedup = range_speedup(model, range);
  // One GPU, a size the range allows and one it forbids (a few sizes:
  // each asks the model for its best batch, the costly part).
  for (const auto& [nodes, gpus] : {std::pair{1, 1}, std::pair{2, 4}, std::pair{4, 3}}) {
    (void)speedup(nodes, nodes * gpus);
    const JobView view = view_at(model, nodes, gpus);
    JobState state;
    state.range = range;
    state.phase = Phase::kRunning;
    state.alloc = Alloc{nodes, gpus, "n1,n2"};
    state.since = 1700000000;
    state.submit = 1699999000;
    state.why = "grow";
    const std::optional<JobState> back = parse_comment(format_comment(view, state));
    fuzz::require(back && back->alloc == state.alloc && back->phase == state.phase, "comment state lost");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::text(data, size);
  const HintResult parsed = parse_hint(text);
  if (parsed) {
    const std::string once = emit_hint(*parsed.hint);
    const HintResult again = parse_hint(once);
    fuzz::require(static_cast<bool>(again), "re-emitted hint rejected: " + again.error + "\n" + once);
    fuzz::require(emit_hint(*again.hint) == once, "re-emitted hint differs:\n" + once);
  }

  // The plugin's path: the file in a spool, read for the job it names.
  const std::uint32_t job_id = parsed ? parsed.hint->job_id : 1;
  const std::string spool = fuzz::scratch_dir();
  const std::string path = hint_path(spool, job_id);
  fuzz::write_file(path, text);
  std::vector<std::string> log;
  HintReader reader([&](const std::string& line) { log.push_back(line); });
  Snapshot snap;
  snap.now = 1700000100;
  ElasticJobSnapshot job;
  job.job_id = job_id;
  job.uid = static_cast<std::uint32_t>(::getuid());
  job.range = {1, 4, 4};
  snap.jobs.push_back(job);
  const std::vector<JobInput> inputs = reader.read(snap, spool);
  fuzz::require(inputs.size() == 1, "one input per job");
  fuzz::require(log.size() <= 1, "more than one line for one file");
  for (const std::string& line : log) fuzz::require_one_line(line, path, kLogSafeMax);
  use_model(inputs[0].model);
  ::unlink(path.c_str());
  return 0;
}

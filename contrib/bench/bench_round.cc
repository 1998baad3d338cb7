// Google Benchmarks of sched/pollux's round outside the policy: plan_round
// (sched/round.cc) with a policy that leaves every job where it is,
// so what is timed is what the plugin adds around the policy (capacity,
// selection, promises, the per-type models, the decisions and their
// SystemComment views). Jobs are pending, with models from a hint measured
// on an H100 with fits on two other types (bench_hint()); range(0) nodes x
// 4 GPUs, range(1) jobs, range(2) GPU types (1: an untyped cluster, where
// no per-type model is made). Figures in doc/benchmarks.md ("sched/pollux's
// round outside the policy"). Public headers only: the scheduling core's
// (sched/), the spool's and libgoodput's.
#include <benchmark/benchmark.h>

#include <csignal>
#include <string>
#include <vector>

#include "sched/job_model.h"
#include "sched/round.h"
#include "pollux/hint.h"
#include "pollux/policy.h"

namespace pollux::sched {
namespace {

// Leaves every job where it is (pending jobs stay pending).
class KeepPolicy final : public Policy {
 public:
  KeepPolicy() : Policy(PolicyOptions{}) {}
  std::string_view name() const noexcept override { return "keep"; }
  std::vector<Placement> optimize(const std::vector<JobInfo>&, const std::vector<NodeInfo>&,
                                  const std::vector<Placement>& current, double) override {
    return current;
  }
};

// What model_from_hint() reads of a hint measured on an H100 with fits
// from two types it ran on before: the values of the spool tests'
// typed_hint() (testsuite/spool/spool_test_util.h), which the figures in
// doc/benchmarks.md were measured with.
Hint bench_hint() {
  Hint h;
  h.limits = BatchLimits{64, 1024, 8, 256, true};
  h.perf = PerfParams{0.0125, 0.00025, 0.004, 0.0002, 0.002, 0.0001, 1.5, 0.011};
  h.grad = GradStats{0.0625, 3.5};
  h.gpu_type = "nvidia_h100_80gb_hbm3";
  h.type_perf = {HintTypePerf{"a100", PerfParams{0.025, 0.0005, 0.004, 0.0002, 0.002, 0.0001, 1.25}},
                 HintTypePerf{"tesla_v100-sxm2-16gb", PerfParams{0.05, 0.001, 0.004, 0.0002, 0.002, 0.0001, 1.5, 0.02}}};
  return h;
}

void PlanRoundOutsideThePolicy(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0)), jobs = static_cast<int>(state.range(1));
  const int types = static_cast<int>(state.range(2));
  Snapshot snap;
  snap.now = 1.7e9;
  if (types > 1) snap.gpu_types = {"a100", "h100", "l40s"};
  snap.gpu_types.resize(static_cast<std::size_t>(types > 1 ? types : 0));
  for (int n = 0; n < nodes; ++n)
    snap.nodes.push_back({"n" + std::to_string(n + 1), 4, 0, true, types > 1 ? n * types / nodes : 0});
  const std::optional<JobModel> model = model_from_hint(bench_hint());
  if (!model) {
    state.SkipWithError("bench_hint() gives no model");
    return;
  }
  std::vector<JobInput> inputs;
  for (int j = 0; j < jobs; ++j) {
    ElasticJobSnapshot job;
    job.job_id = static_cast<std::uint32_t>(1000 + j);
    job.uid = 1000;
    job.submit_time = snap.now - 60 - j;
    job.range = {1, 4, 4};
    snap.jobs.push_back(job);
    JobInput in;
    in.model = model;
    in.max_profiled_replicas = 4;
    in.resize_signal = SIGUSR1;
    in.hint_restarts = 0;
    inputs.push_back(in);
  }
  const Params params;
  KeepPolicy policy;
  std::size_t decisions = 0;
  for (auto _ : state) {
    const RoundResult r = plan_round(snap, inputs, params, &policy);
    if (!r.error.empty()) {
      state.SkipWithError(r.error.c_str());
      return;
    }
    decisions = r.decisions.size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["decisions"] = static_cast<double>(decisions);
}
BENCHMARK(PlanRoundOutsideThePolicy)
    ->Args({16, 40, 1})
    ->Args({16, 40, 3})
    ->Args({2048, 4000, 1})
    ->Args({2048, 4000, 3})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pollux::sched

BENCHMARK_MAIN();

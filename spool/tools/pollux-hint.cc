// pollux-hint: validates a hint file the way sched/pollux does and prints
// its fields, one "key value" line each (or one field with --get).
// For admins looking at a spool, and for the test scripts.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "pollux/atomic_file.h"
#include "pollux/hint.h"
#include "pollux/yaml_doc.h"

namespace {

using pollux::yaml::format_number;

std::map<std::string, std::string> flatten(const pollux::Hint& h) {
  std::map<std::string, std::string> f;
  auto n = [](double v) { return format_number(v); };
  f["version"] = std::to_string(h.version);
  f["job_id"] = std::to_string(h.job_id);
  f["uid"] = std::to_string(h.uid);
  f["timestamp"] = n(h.timestamp);
  f["restart_count"] = std::to_string(h.restart_count);
  f["step"] = std::to_string(h.step);
  f["progress"] = n(h.progress);
  f["limits.init_batch"] = n(h.limits.init_batch);
  f["limits.max_batch"] = n(h.limits.max_batch);
  f["limits.min_atomic"] = std::to_string(h.limits.min_atomic);
  f["limits.max_atomic"] = std::to_string(h.limits.max_atomic);
  f["limits.accumulation"] = h.limits.accumulation ? "true" : "false";
  f["config.nodes"] = std::to_string(h.config.nodes);
  f["config.replicas"] = std::to_string(h.config.replicas);
  f["config.atomic_batch"] = std::to_string(h.config.atomic_batch);
  f["config.accum_steps"] = std::to_string(h.config.accum_steps);
  const auto perf_fields = [&](const std::string& p, const pollux::PerfParams& perf) {
    const char* names[] = {"alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma", "alpha_1"};
    const auto v = perf.to_array();
    for (int i = 0; i < pollux::PerfParams::kCount; ++i) f[p + names[i]] = n(v[i]);
    f[p + "sharded"] = perf.sharded ? "true" : "false";
  };
  if (!h.gpu_type.empty()) f["gpu_type"] = h.gpu_type;
  if (h.perf) perf_fields("perf.", *h.perf);
  f["type_perf.count"] = std::to_string(h.type_perf.size());
  for (std::size_t i = 0; i < h.type_perf.size(); ++i) {
    const std::string p = "type_perf." + std::to_string(i) + ".";
    f[p + "gpu_type"] = h.type_perf[i].gpu_type;
    perf_fields(p + "perf.", h.type_perf[i].perf);
  }
  if (h.grad) {
    f["grad.sqr"] = n(h.grad->sqr);
    f["grad.var"] = n(h.grad->var);
  }
  f["max_profiled_replicas"] = std::to_string(h.max_profiled_replicas);
  f["profile.count"] = std::to_string(h.profile.size());
  for (std::size_t i = 0; i < h.profile.size(); ++i) {
    const auto& s = h.profile[i];
    const std::string p = "profile." + std::to_string(i) + ".";
    f[p + "nodes"] = std::to_string(s.nodes);
    f[p + "replicas"] = std::to_string(s.replicas);
    f[p + "atomic_batch"] = n(s.atomic_batch);
    f[p + "grad_time"] = n(s.grad_time);
    f[p + "step_time"] = n(s.step_time);
  }
  if (h.checkpoint) {
    f["checkpoint.step"] = std::to_string(h.checkpoint->step);
    f["checkpoint.time"] = n(h.checkpoint->time);
    f["checkpoint.ready_for_requeue"] = h.checkpoint->ready_for_requeue ? "true" : "false";
  }
  f["resize_signal"] = std::to_string(h.resize_signal);  // 0: none announced (moldable)
  f["restart_seconds"] = n(h.restart_seconds);           // 0: not measured
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Validate a Pollux hint file as sched/pollux does and print its fields."};
  std::string path, get;
  long long uid = static_cast<long long>(::getuid());
  long long job_id = -1;
  app.add_option("file", path, "hint file (<spool>/<job_id>.hint.yaml)")->required();
  app.add_option("--uid", uid, "expected owner and uid field (default: your uid)")->check(CLI::Range(0LL, 4294967294LL));
  app.add_option("--job-id", job_id, "expected job id (default: the file's)")->check(CLI::Range(1LL, 4294967293LL));
  app.add_option("--get", get, "print only this field (e.g. config.replicas, perf.alpha_c)");
  bool emit = false;
  app.add_flag("--emit", emit, "print the hint as this library writes it (a file the agent wrote is identical)");
  std::vector<std::string> predict;
  app.add_option("--predict", predict,
                 "N,R,m,s: print the fitted model's seconds per optimizer step on N nodes, R replicas, "
                 "atomic batch m, s accumulation steps (repeatable)");
  CLI11_PARSE(app, argc, argv);

  if (job_id < 0) {
    // No job id given: take the file's own (the checks below still apply).
    const pollux::FileRead f = pollux::read_file_checked(path, pollux::kHintMaxBytes);
    const pollux::HintResult first = f ? pollux::parse_hint(f.data) : pollux::HintResult{};
    job_id = first ? first.hint->job_id : 0;
  }
  const pollux::HintResult r =
      pollux::read_hint_file(path, static_cast<std::uint32_t>(uid), static_cast<std::uint32_t>(job_id));
  if (!r) {
    std::fprintf(stderr, "pollux-hint: rejected: %s\n", r.error.c_str());
    return 1;
  }
  if (emit) {
    std::cout << pollux::emit_hint(*r.hint);
    return 0;
  }
  if (!predict.empty()) {
    if (!r.hint->perf) {
      std::fprintf(stderr, "pollux-hint: %s: no fitted model (perf) yet\n", path.c_str());
      return 2;
    }
    for (const std::string& p : predict) {
      int n = 0, rep = 0, m = 0, s = 0;
      char tail = 0;
      if (std::sscanf(p.c_str(), "%d,%d,%d,%d%c", &n, &rep, &m, &s, &tail) != 4 || n < 1 || rep < n || m < 1 || s < 0) {
        std::fprintf(stderr, "pollux-hint: --predict %s: expected N,R,m,s with 1 <= N <= R, m >= 1, s >= 0\n", p.c_str());
        return 2;
      }
      std::cout << pollux::yaml::format_number(pollux::predict_iter_time(*r.hint->perf, n, rep, m, s)) << '\n';
    }
    return 0;
  }
  const auto fields = flatten(*r.hint);
  if (!get.empty()) {
    const auto it = fields.find(get);
    if (it == fields.end()) {
      std::fprintf(stderr, "pollux-hint: %s: no field '%s' in this hint\n", path.c_str(), get.c_str());
      return 2;
    }
    std::cout << it->second << '\n';
    return 0;
  }
  for (const auto& [k, v] : fields) std::cout << k << ' ' << v << '\n';
  return 0;
}

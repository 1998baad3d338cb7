// A hyper-parameter search (see study.h).
#include "study.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "application.h"
#include "input_error.h"
#include "time_limit.h"

namespace pollux::sim {
namespace {

// A positive decimal integer of at most 6 digits, or -1.
int positive(const std::string& s) {
  if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= '0' && c <= '9'; }))
    return -1;
  const int v = std::stoi(s);
  return v > 0 ? v : -1;
}

// splitmix64: the same numbers on every platform (std's distributions are
// not specified bit for bit).
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

}  // namespace

StudySpec parse_study(const std::string& arg, const AppCatalog& catalog) {
  const std::string form = "--study " + arg + ": ";
  const std::size_t c1 = arg.find(':');
  if (c1 == std::string::npos) throw InputError(form + "expected APP:N[:K] (e.g. cifar10:64)");
  StudySpec s;
  s.application = arg.substr(0, c1);
  const std::string rest = arg.substr(c1 + 1);
  const std::size_t c2 = rest.find(':');
  const std::string n = rest.substr(0, c2), k = c2 == std::string::npos ? "" : rest.substr(c2 + 1);
  if (s.application.empty()) throw InputError(form + "no application before ':'");
  if (!catalog.has(s.application))
    throw InputError(form + "unknown application '" + s.application + "' (none in " + catalog.dir() + ")");
  s.trials = positive(n);
  if (s.trials < 0) throw InputError(form + "N (trials) '" + n + "' is not an integer in [1, 999999]");
  if (c2 != std::string::npos) {
    s.in_flight = positive(k);
    if (s.in_flight < 0) throw InputError(form + "K (trials in flight) '" + k + "' is not an integer in [1, 999999]");
    if (s.in_flight > s.trials)
      throw InputError(form + "K (trials in flight) " + k + " is more than N (trials) " + n);
    if (s.in_flight == s.trials) s.in_flight = 0;
  }
  return s;
}

std::vector<int> study_rungs(int min_resource, int reduction_factor, int epochs) {
  std::vector<int> rungs;
  for (long long r = min_resource; r < epochs; r *= reduction_factor) {
    rungs.push_back(static_cast<int>(r));
    if (reduction_factor < 2) break;
  }
  return rungs;
}

std::vector<TrialPlan> plan_study(const StudySpec& spec, int epochs) {
  const std::vector<int> rungs = study_rungs(spec.min_resource, spec.reduction_factor, epochs);
  Random rng{spec.seed};
  std::vector<TrialPlan> plan(static_cast<std::size_t>(spec.trials));
  std::vector<std::vector<double>> reported(rungs.size());  // per rung, in trial order
  for (TrialPlan& t : plan) {
    // Every trial draws its quality and all its rungs' noise, pruned or
    // not, so trial i's draws do not depend on the others' fates.
    t.quality = rng.uniform();
    std::vector<double> z;
    for (std::size_t k = 0; k < rungs.size(); ++k) z.push_back(2 * rng.uniform() - 1);
    t.last_epoch = epochs;
    t.survives = true;
    for (std::size_t k = 0; k < rungs.size(); ++k) {
      const double v = t.quality + kStudyNoise * (1.0 - static_cast<double>(rungs[k]) / epochs) * z[k];
      t.rung_values.push_back(v);
      std::vector<double>& seen = reported[k];
      seen.push_back(v);
      std::vector<double> sorted = seen;
      std::sort(sorted.begin(), sorted.end());
      const std::size_t keep = std::max<std::size_t>(sorted.size() / static_cast<std::size_t>(spec.reduction_factor), 1);
      if (v > sorted[keep - 1]) {
        t.last_epoch = rungs[k];
        t.survives = false;
        break;
      }
    }
  }
  return plan;
}

long long study_batch(const StudySpec& spec, StepTimeCache& steps, int gpus_per_node) {
  if (spec.batch > 0) return spec.batch;
  const Application& a = steps.app();
  long long best = 0;
  double fastest = HUGE_VAL;
  for (double m = a.init_batch(); m <= a.max_batch(); m *= 2) {
    if (m < static_cast<double>(a.min_local_bsz()) * spec.gpus) continue;
    const double t = rigid_runtime(steps, spec.gpus, static_cast<long long>(m), gpus_per_node, 0);
    if (t < fastest) {
      fastest = t;
      best = static_cast<long long>(m);
    }
  }
  if (best == 0) best = static_cast<long long>(std::max(a.init_batch(), double(a.min_local_bsz()) * spec.gpus));
  return best;
}

Workload study_workload(const StudySpec& spec, const std::vector<TrialPlan>& plan, long long batch) {
  Workload w;
  char name[64];
  std::snprintf(name, sizeof name, "study-%s-%d", spec.application.c_str(), spec.trials);
  w.name = name;
  w.path = "--study";
  for (std::size_t i = 0; i < plan.size(); ++i) {
    WorkloadJob j;
    std::snprintf(name, sizeof name, "trial-%03zu", i);
    j.name = name;
    j.application = spec.application;
    j.num_replicas = spec.gpus;
    j.batch_size = batch;
    j.last_epoch = plan[i].last_epoch;
    w.jobs.push_back(std::move(j));
  }
  return w;
}

StudySummary summarize_study(const StudySpec& spec, const std::vector<TrialPlan>& plan, const RunResult& run,
                             int epochs) {
  const std::vector<int> rungs = study_rungs(spec.min_resource, spec.reduction_factor, epochs);
  StudySummary s;
  s.makespan = run.makespan;
  s.gpu_hours = run.gpu_hours;
  s.rung_trials.assign(rungs.size(), 0);
  s.rung_mean_time.assign(rungs.size(), 0);
  s.rung_last_time.assign(rungs.size(), 0);
  double best = HUGE_VAL, last_prune = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const JobOutcome& o = run.jobs[i];
    if (plan[i].survives) {
      ++s.survivors;
      s.survivor_gpu_hours += o.gpu_seconds / 3600;
      if (plan[i].quality < best) {
        best = plan[i].quality;
        s.best_finish = o.completion_time;
      }
    } else {
      ++s.pruned;
      last_prune = std::max(last_prune, o.completion_time);
    }
    for (std::size_t k = 0; k < rungs.size(); ++k) {
      const std::size_t e = static_cast<std::size_t>(rungs[k]);
      if (o.epoch_ends.size() < e) break;
      ++s.rung_trials[k];
      s.rung_mean_time[k] += o.epoch_ends[e - 1];
      s.rung_last_time[k] = std::max(s.rung_last_time[k], o.epoch_ends[e - 1]);
    }
  }
  for (std::size_t k = 0; k < rungs.size(); ++k)
    if (s.rung_trials[k] > 0) s.rung_mean_time[k] /= s.rung_trials[k];
  // The GPU timeline (full rounds; each row holds until the next).
  double held = 0, survivors = 0, after = 0, after_time = 0;
  for (std::size_t r = 0; r < run.times.size(); ++r) {
    const double until = r + 1 < run.times.size() ? run.times[r + 1] : run.makespan;
    const double dt = std::max(0.0, until - run.times[r]);
    double all = 0, surv = 0;
    for (std::size_t i = 0; i < plan.size() && i < run.gpus[r].size(); ++i) {
      all += run.gpus[r][i];
      if (plan[i].survives) surv += run.gpus[r][i];
    }
    s.mean_gpus += all * dt;
    if (run.times[r] < last_prune) {
      held += all * dt;
      survivors += surv * dt;
    } else {
      after += surv * dt;
      after_time += dt;
    }
  }
  s.survivor_share_while_pruning = held > 0 ? survivors / held : 0;
  s.survivor_gpus_after = after_time > 0 ? after / after_time : 0;
  s.mean_gpus = s.makespan > 0 ? s.mean_gpus / s.makespan : 0;
  return s;
}

void print_study(std::ostream& out, const StudySpec& spec, const StudySummary& s, int epochs) {
  const std::vector<int> rungs = study_rungs(spec.min_resource, spec.reduction_factor, epochs);
  char line[256];
  std::snprintf(line, sizeof line,
                "study %s: %d trials (%s in flight), seed %llu, successive halving eta %d, rungs at epochs",
                spec.application.c_str(), spec.trials,
                spec.in_flight > 0 ? std::to_string(spec.in_flight).c_str() : "all", (unsigned long long)spec.seed,
                spec.reduction_factor);
  out << line;
  for (int r : rungs) out << ' ' << r;
  std::snprintf(line, sizeof line, " of %d; %d pruned, %d trained to the end\n", epochs, s.pruned, s.survivors);
  out << line;
  std::snprintf(line, sizeof line,
                "makespan %.0f s, best trial finished at %.0f s, %.1f GPU-hours (%.1f by the %d survivors)\n",
                s.makespan, s.best_finish, s.gpu_hours, s.survivor_gpu_hours, s.survivors);
  out << line;
  for (std::size_t k = 0; k < rungs.size(); ++k) {
    std::snprintf(line, sizeof line, "rung %zu (epoch %d): %d trials reached it, mean at %.0f s, last at %.0f s\n", k,
                  rungs[k], s.rung_trials[k], s.rung_mean_time[k], s.rung_last_time[k]);
    out << line;
  }
  std::snprintf(line, sizeof line,
                "survivors' share of the GPUs held until the last pruning %.1f%%; GPUs they held after it %.1f\n",
                100 * s.survivor_share_while_pruning, s.survivor_gpus_after);
  out << line;
  std::snprintf(line, sizeof line, "GPUs held by the trials: %.1f on average over the makespan\n", s.mean_gpus);
  out << line;
}

}  // namespace pollux::sim

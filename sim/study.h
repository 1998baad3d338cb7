// A hyper-parameter search as pollux-sim models it (pollux-sim --study;
// doc/simulator.md, "Hyper-parameter searches"): N trials of one
// application, each with a seeded random final quality, stopped early by
// an asynchronous successive-halving pruner.
//
// - Quality: trial i's final value (a loss: lower is better) q_i is
//   uniform in [0, 1) from the seed. What it reports at epoch e is
//   q_i + kStudyNoise x (1 - e / E) x z, z uniform in [-1, 1) from the seed
//   per (trial, rung): a noisy early estimate that sharpens as it trains
//   (E: the application's epochs).
// - Pruner: Optuna's SuccessiveHalvingPruner (its rule, not its code):
//   rung k at epoch min_resource x eta^k (k = 0, 1... while below E); a
//   trial reaching a rung is promoted iff its value is within the best
//   max(floor(n / eta), 1) of the n values reported at that rung so far,
//   its own included; otherwise it stops there (pruned). A trial promoted
//   past every rung trains to E.
// - Decisions are made in trial-number order (what Optuna decides when
//   the trials reach every rung in that order), so that every policy runs
//   the same trials and stops the same ones at the same epochs: the
//   scheduler changes when, not which.
#ifndef POLLUX_SIM_STUDY_H
#define POLLUX_SIM_STUDY_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cluster_sim.h"
#include "workload.h"

namespace pollux::sim {

class Application;
class AppCatalog;

/// Amplitude of the early estimates' noise (the model above).
inline constexpr double kStudyNoise = 0.25;

struct StudySpec {
  std::string application;  ///< an application of the traces
  int trials = 0;           ///< N > 0
  int in_flight = 0;        ///< K: trials running at once (0: all N submitted at time 0)
  std::uint64_t seed = 1;
  int reduction_factor = 4;  ///< eta (Optuna's default)
  int min_resource = 1;      ///< epochs to the first rung
  /// Fixed-size policies: every trial's GPUs and total batch (batch 0:
  /// the one that makes a whole training on that many GPUs shortest).
  int gpus = 1;
  long long batch = 0;
};

/// Parses --study's "APP:N[:K]" (N trials of APP, K in flight). InputError
/// naming the option and what is wrong: an empty or unknown application,
/// N or K not a positive integer (K <= N), a malformed value.
StudySpec parse_study(const std::string& arg, const AppCatalog& catalog);

/// What the pruner does with each trial (the model above).
struct TrialPlan {
  double quality = 0;               ///< final value q (lower is better)
  std::vector<double> rung_values;  ///< reported at each rung it reached
  int last_epoch = 0;               ///< epochs it trains (E: survives every rung)
  bool survives = false;
};

/// The rung epochs: min_resource x eta^k below `epochs`.
std::vector<int> study_rungs(int min_resource, int reduction_factor, int epochs);

/// The trials and the pruner's decisions (deterministic in the spec).
std::vector<TrialPlan> plan_study(const StudySpec& spec, int epochs);

/// The total batch of a fixed-size trial on `gpus` GPUs: `spec.batch`, or
/// the power-of-two multiple of M0 (within the application's limits)
/// whose whole training alone on those GPUs is shortest.
long long study_batch(const StudySpec& spec, StepTimeCache& steps, int gpus_per_node);

/// The study as a workload (trial-000... submitted at 0, each stopped at its
/// last_epoch; fixed-size policies run them at spec.gpus and `batch`).
Workload study_workload(const StudySpec& spec, const std::vector<TrialPlan>& plan, long long batch);

/// What a study's run measured (from its RunResult).
struct StudySummary {
  double makespan = 0;        ///< last trial's end - first submission (s)
  double best_finish = 0;     ///< when the best surviving trial completed (s)
  double gpu_hours = 0;
  double survivor_gpu_hours = 0;  ///< of the trials that trained to the end
  int survivors = 0;
  int pruned = 0;
  /// Per rung: trials that reached it and the mean and latest time they did.
  std::vector<int> rung_trials;
  std::vector<double> rung_mean_time, rung_last_time;
  /// Survivors' share of the GPUs held (GPU-seconds) before the last
  /// pruning, and their mean GPUs held from then to the end.
  double survivor_share_while_pruning = 0;
  double survivor_gpus_after = 0;
  /// GPUs held by the trials on average over the makespan.
  double mean_gpus = 0;
};

StudySummary summarize_study(const StudySpec& spec, const std::vector<TrialPlan>& plan, const RunResult& run,
                             int epochs);

/// Prints the summary (one block, after pollux-sim's table).
void print_study(std::ostream& out, const StudySpec& spec, const StudySummary& s, int epochs);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_STUDY_H

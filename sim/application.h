// The simulated application: what a training job of one kind does on the
// cluster, from its measured traces (the semantics of the Pollux OSDI'21
// artifact's simulator, described in the traces' README.md).
//
// - Limits: M0 = the smallest validated total batch, M_max = the largest,
//   m_min / m_max = the smallest / largest per-GPU batch in placements.csv
//   (yolov3: m_max = 8); training lasts a fixed number of epochs per
//   application (bert 2, cifar10 100, ncf 10, imagenet 90, deepspeech2 80,
//   yolov3 50).
// - Epoch e ends when progress reaches the minimum, over the validation
//   runs, of the cumulative progress after e epochs.
// - Gradient statistics during epoch e at total batch M: linear in M
//   between the validated batch sizes around it (clamped at the ends).
// - Step and sync time: see step_times().
#ifndef POLLUX_SIM_APPLICATION_H
#define POLLUX_SIM_APPLICATION_H

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "app_trace.h"
#include "delaunay_interp.h"
#include "pollux/efficiency.h"
#include "pollux/goodput.h"
#include "pollux/throughput.h"

namespace pollux::sim {

/// Per-application settings the traces do not carry (the artifact's).
struct AppSpec {
  int max_epochs = 0;        ///< 0: the length of the shortest validation run
  int max_local_bsz = 0;     ///< 0: the largest local_bsz in placements.csv
  long long fixed_batch = 0; ///< > 0: Pollux does not adapt this job's batch (ncf: 32768)
  int max_replicas = 0;      ///< > 0: Pollux and Optimus never give it more GPUs (ncf: 1)
};

/// The artifact's settings for the applications it knows; other names get
/// the defaults of AppSpec.
AppSpec known_app_spec(const std::string& name);

/// Where step and sync time came from.
enum class StepSource {
  kPlacement,  ///< the placement is in placements.csv: linear in local_bsz
  kScattered,  ///< linear on the Delaunay triangulation of all measurements
  kModel,      ///< outside every measurement: the fitted throughput model
};

struct StepTimes {
  double step = 0;  ///< seconds per optimizer step (no accumulation)
  double sync = 0;  ///< the gradient synchronisation part of it
  StepSource source = StepSource::kPlacement;
};

/// One optimizer step of an application: how long it takes and how much
/// progress it makes (the rule SimJob::step integrates over time, and
/// pollux-emulate applies step by step).
struct Iteration {
  double batch = 0;    ///< total batch M = R m (s + 1)
  GradStats grad;      ///< the traced gradient statistics at M in the epoch
  double seconds = 0;  ///< T_iter = step + s (step - sync)
  double gain = 0;     ///< progress of the step: AdaScale gain of `grad` at M
};

class Application {
 public:
  Application(AppTrace trace, const AppSpec& spec);

  const std::string& name() const noexcept { return trace_.name; }
  double init_batch() const noexcept { return init_batch_; }   ///< M0
  double max_batch() const noexcept { return max_batch_; }     ///< M_max
  int min_local_bsz() const noexcept { return min_local_; }    ///< m_min
  int max_local_bsz() const noexcept { return max_local_; }    ///< m_max
  int max_epochs() const noexcept { return max_epochs_; }
  const AppSpec& spec() const noexcept { return spec_; }
  /// {M0, M_max, m_min, m_max, accumulation = true}.
  BatchLimits limits() const noexcept;
  /// A fixed total batch on `replicas` GPUs: local = ceil(batch / R),
  /// s = ceil(local / m_max) - 1 (at least 1 on one GPU when
  /// `accumulate_on_one_gpu`), m = ceil(local / (s + 1)), then cap_atomic().
  BatchConfig split_batch(double batch, int replicas, bool accumulate_on_one_gpu) const noexcept;
  /// m capped so that R m (s + 1) <= M_max (the artifact's last step of
  /// every batch choice), and at least 1.
  int cap_atomic(int atomic, int replicas, int accum_steps) const noexcept;

  /// Progress at which `epoch` epochs are complete (0 for epoch 0);
  /// epoch in [0, max_epochs].
  double epoch_progress(int epoch) const;
  /// The epoch after which a job told to train `epochs` epochs ends (the
  /// one rule of pollux-sim's --epochs, a study's pruned trials, a
  /// history's pollux-epochs= and pollux-emulate's --epochs): `epochs`,
  /// or the whole training (max_epochs) for 0. InputError ("N: APP trains
  /// M epochs ...") for fewer than 0 or more than the application trains.
  int last_epoch(int epochs) const;
  /// The progress at which that job is complete:
  /// epoch_progress(last_epoch(epochs)). SimJob completes when its
  /// progress reaches it (at that epoch's end), pollux-emulate stops at
  /// the first step that reaches it.
  double target_progress(int epochs) const { return epoch_progress(last_epoch(epochs)); }
  /// Gradient statistics during `epoch` (0-based, < max_epochs) at total batch `batch`.
  GradStats grad_stats(double batch, int epoch) const;
  /// Cumulative optimizer steps after epoch `epoch` (0-based) at total
  /// batch `batch`, linear between validated batch sizes (the Optimus oracle).
  double iterations(double batch, int epoch) const;
  /// One optimizer step during `epoch` with step times `t`, on `replicas`
  /// GPUs at per-GPU batch `atomic` and `accum` accumulation steps.
  Iteration iteration(const StepTimes& t, int replicas, int atomic, int accum, int epoch) const;

  /// Step and sync time of one optimizer step with per-GPU batch
  /// `local_bsz` on a placement given as per-node GPU counts, in node
  /// order (zeros are ignored). The placement is rotated to its
  /// lexicographically smallest form; if that form is in placements.csv and
  /// local_bsz is within its measured range, the times are linear in
  /// local_bsz between its rows. Otherwise they are interpolated linearly
  /// over (nodes, replicas, local_bsz), nodes capped at 16, on a Delaunay
  /// triangulation of placements.csv averaged per (nodes, replicas,
  /// local_bsz) and scalability.csv. Outside the convex hull of those
  /// measurements (a what-if cluster the traces do not cover), the
  /// application's throughput model fitted to all of them is used.
  StepTimes step_times(const std::vector<int>& counts, int local_bsz) const;

  /// The lexicographically smallest rotation of the non-zero counts.
  static std::vector<int> canonical_placement(const std::vector<int>& counts);

 private:
  struct Curve {  // one placement of placements.csv, by local_bsz
    std::vector<double> bsz, step, sync;
  };

  AppTrace trace_;
  AppSpec spec_;
  double init_batch_ = 0, max_batch_ = 0;
  int min_local_ = 0, max_local_ = 0, max_epochs_ = 0;
  std::vector<double> epoch_progress_;      // [0, max_epochs]
  std::vector<double> validated_batches_;   // ascending
  std::map<std::string, Curve> curves_;     // by placement id
  std::unique_ptr<DelaunayInterpolator> scattered_;
  PerfParams fallback_;                     // fitted to every measurement
};

/// Memoises Application::step_times for one simulation run (not shared
/// between threads), and counts where the answers came from.
class StepTimeCache {
 public:
  explicit StepTimeCache(const Application& app) : app_(&app) {}
  const StepTimes& get(const std::vector<int>& counts, int local_bsz);
  const Application& app() const noexcept { return *app_; }
  /// Distinct lookups that fell outside every measurement.
  long long model_lookups() const noexcept { return model_lookups_; }

 private:
  const Application* app_;
  std::unordered_map<std::string, StepTimes> memo_;
  long long model_lookups_ = 0;
};

/// The applications of a traces directory, loaded on demand. Load every
/// application a run needs (load()) before sharing the catalog between
/// threads; get() is then safe to call concurrently.
class AppCatalog {
 public:
  /// `profile` non-empty: one GPU type's step times (read_app_trace).
  explicit AppCatalog(std::string traces_dir, std::string profile = "")
      : dir_(std::move(traces_dir)), profile_(std::move(profile)) {}
  const std::string& dir() const noexcept { return dir_; }
  const std::string& profile() const noexcept { return profile_; }
  /// True when `<dir>/<name>/placements.csv` (or -<profile>.csv) exists.
  bool has(const std::string& name) const;
  /// Reads and checks the application's traces (once); InputError on bad data.
  const Application& load(const std::string& name);
  /// An application load() returned before; std::out_of_range otherwise.
  const Application& get(const std::string& name) const;

 private:
  std::string dir_;
  std::string profile_;
  std::map<std::string, std::unique_ptr<Application>> apps_;
};

}  // namespace pollux::sim

#endif  // POLLUX_SIM_APPLICATION_H

// One simulated training job and its agent (the Pollux OSDI'21 artifact's
// simulated job, on this project's libgoodput):
//
// - Progress: while running on a placement at total batch M = R m (s + 1),
//   the job makes gain(M) / T_iter progress per second, T_iter = step +
//   s (step - sync) from the traces, gain from the traced gradient
//   statistics of its current epoch; distributed jobs that share a node
//   with another distributed job go (1 - interference) times as fast.
//   Crossing an epoch boundary takes round(remaining progress / rate)
//   seconds; the job completes after its last epoch.
// - Re-allocation: the job stalls for the restart delay (30 s) first; it
//   counts as attained service. The job remembers the stall of its last
//   re-allocation that placed it (restart_cost), as sched/pollux learns a
//   job's restart time from its agent's hint.
// - The agent: every (nodes, replicas, m) the job runs at is a profile
//   sample (grad time = step - sync, step time = step); the throughput
//   model is re-fitted on all samples whenever a new one appears (lazily,
//   when the model is next needed). After every stretch of progress (each
//   epoch boundary and the end of each interval) and every re-allocation
//   the job re-picks (m, s): GoodputModel::optimize for adaptive jobs, the
//   fixed batch split into micro-batches of at most m_max otherwise.
// - GPU types (SimOptions::gpu_types): the traces' step times are scaled
//   per placement: T_grad = step - sync divided by the placement's compute
//   speed (the slowest of its nodes' types: data-parallel replicas wait
//   for the slowest at every all-reduce), sync unchanged. With `model
//   slots` > 1 (the type-aware policy) the agent keeps one profile and one
//   throughput fit per GPU type, as sched/pollux's hint would.
#ifndef POLLUX_SIM_SIM_JOB_H
#define POLLUX_SIM_SIM_JOB_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "application.h"
#include "pollux/job_description.h"
#include "pollux/policy.h"
#include "pollux/speedup.h"
#include "pollux/throughput.h"
#include "pollux/typed_goodput.h"

namespace pollux::sim {

class SimJob {
 public:
  /// `fixed_batch` > 0: the job trains at that total batch (baselines; ncf
  /// under Pollux); 0: the agent adapts the batch to the allocation.
  SimJob(std::string name, double submit_time, StepTimeCache& steps, long long fixed_batch, int model_slots = 1);
  /// A job of a site's history with no application (WorkloadJob::recorded):
  /// it completes after `duration` seconds on GPUs, whatever their number
  /// and placement, after the stall reallocate() gives it (the simulation
  /// gives none but a node's boot: its recorded time holds its start). It
  /// has no app() and no model.
  SimJob(std::string name, double submit_time, double duration);
  bool recorded() const noexcept { return base_steps_ == nullptr; }

  /// Advances the job by `seconds` of wall time (whole seconds; the job's
  /// own clock must equal the cluster's). `interference` in [0, 1).
  void step(double seconds, double interference);
  /// Moves the job to `placement` (per-node GPU counts in node order; all
  /// zero or empty = preempted) and starts the restart delay.
  /// `slot` is the GPU type whose profile the new placement feeds (0 when
  /// the job keeps one model), `speed` its compute speed relative to the
  /// traces' GPUs.
  /// `steps` (non-null): the step times of the new placement's GPU type
  /// (its own measured profile); null: the traces' scaled by `speed`.
  void reallocate(const std::vector<int>& placement, double restart_delay, int slot = 0, double speed = 1.0,
                  StepTimeCache* steps = nullptr);

  /// Progress `factor` times slower than the traces say (Sia's simulator's
  /// calibration to its testbed; 1 = none).
  void set_slowdown(double factor) noexcept { slowdown_ = factor > 0 ? factor : 1.0; }
  /// The job ends after `epochs` epochs (a trial its pruner stops at a
  /// rung, a workload trained --epochs N); 0: its full length. The rule
  /// is Application::last_epoch's (InputError beyond the application's).
  void set_last_epoch(int epochs) { last_epoch_ = app().last_epoch(epochs); }
  /// The job ends `seconds` after its last step (a replay's process exit
  /// and Slurm's completion): completion_time() is then, and it holds its
  /// GPUs (attained service) until then; no training is left to stall.
  void set_end_delay(double seconds) noexcept { end_delay_ = seconds > 0 ? seconds : 0.0; }
  /// Whether the job has ever been placed (its first start is not a restart).
  bool started() const noexcept { return restarts_ >= 0; }
  /// Its training is done and it is in its end delay (set_end_delay): it
  /// holds its GPUs, and nothing in it can checkpoint for a resize.
  bool ending() const noexcept { return trained_time_.has_value() && !complete(); }
  /// Submits the job at `time` (a study driver submitting a trial when
  /// another ends); before it, submit_time() is +infinity when constructed so.
  void submit(double time) noexcept { submit_time_ = time; }
  /// Seconds (on the cluster's clock) at which each epoch ended, in order.
  const std::vector<double>& epoch_ends() const noexcept { return epoch_ends_; }
  const std::string& name() const noexcept { return name_; }
  const Application& app() const noexcept { return steps_->app(); }
  double submit_time() const noexcept { return submit_time_; }
  bool complete() const noexcept { return completion_time_.has_value(); }
  /// In the middle of a re-allocation's stall.
  bool restarting() const noexcept { return rescale_time_ > 0 && !placement_.empty(); }
  double completion_time() const { return *completion_time_; }
  int epoch() const noexcept { return epoch_; }
  double progress() const noexcept { return progress_; }
  int restarts() const noexcept { return restarts_ < 0 ? 0 : restarts_; }
  /// Seconds the last re-allocation that placed the job stalled it (what
  /// its agent measures and reports); 0 before it first ran.
  double restart_cost() const noexcept { return measures_.restart_seconds; }
  /// When the re-allocation that placed the job on its current placement
  /// began (sched/pollux's job start time); 0 while it holds nothing.
  double run_start() const noexcept { return placement_.empty() ? 0.0 : run_start_; }
  double attained_service() const noexcept { return attained_service_; }
  int gpus() const noexcept;
  long long fixed_batch() const noexcept { return fixed_batch_; }
  int atomic_bsz() const noexcept { return atomic_bsz_; }
  int accum_steps() const noexcept { return accum_steps_; }
  /// Total batch R m (s + 1) of the current configuration (0 when idle).
  long long batch_size() const noexcept;
  /// The most replicas of any profile sample (0 before the first).
  int max_profiled_replicas() const noexcept { return measures_.max_profiled_replicas; }
  /// What its agent would report of it (the hint's AgentMeasures).
  const AgentMeasures& measures() const noexcept { return measures_; }
  /// Refits done so far (for statistics).
  long long fits() const noexcept { return fits_; }

  /// The fitted throughput model of the current slot, refitting if a
  /// sample arrived since the last fit; nullopt before its first sample.
  const std::optional<PerfParams>& perf_params() { return perf_params(slot_); }
  const std::optional<PerfParams>& perf_params(int slot);
  int model_slots() const noexcept { return static_cast<int>(slots_.size()); }
  /// One speedup per GPU type (TypedGoodput): fitted where the job has
  /// run, estimated from `ratios` elsewhere.
  std::vector<SpeedupFn> typed_speedups(const TypeRatios& ratios);
  /// The goodput speedup function of the current model (cached until the
  /// model or the gradient statistics change); empty before the first sample.
  SpeedupFn speedup_fn();
  /// The same function itself (what sched/pollux's JobModel holds); null
  /// before the first sample.
  std::shared_ptr<const SpeedupFunction> speedup_function();
  /// The gradient statistics of the current epoch (nullopt before it ran).
  const std::optional<GradStats>& grad_stats() const noexcept { return grad_; }
  /// The GPU type slot the job's current (or last) placement feeds.
  int slot() const noexcept { return slot_; }

 private:
  void update_local_bsz();
  void add_profile(int nodes, int replicas, int atomic, const StepTimes& t);

  std::string name_;
  double submit_time_;
  double duration_ = 0;  // recorded(): seconds on GPUs to completion
  StepTimeCache* steps_;
  StepTimeCache* base_steps_;  // the traces' (steps_ is a type's own while on it)
  long long fixed_batch_;

  std::vector<int> placement_;  // per-node GPU counts, no zeros
  double current_time_ = 0;
  double rescale_time_ = 0;
  int atomic_bsz_ = 0;
  int accum_steps_ = 0;
  int epoch_ = 0;
  int last_epoch_ = 0;  // Application::last_epoch's; 0 until set: the application's max_epochs
  std::vector<double> epoch_ends_;
  double progress_ = 0;
  double attained_service_ = 0;
  int restarts_ = -1;  // -1: never started
  double run_start_ = 0;
  std::optional<double> completion_time_;
  double end_delay_ = 0;
  std::optional<double> trained_time_;  // its last step ended (the end delay runs from there)

  struct Slot {  // the profile and fit of one GPU type
    std::map<std::tuple<int, int, int>, bool> keys;
    std::vector<ProfileSample> profile;  // in the order seen
    bool stale = false;
    std::optional<PerfParams> perf;
  };
  std::vector<Slot> slots_;
  int slot_ = 0;
  double speed_ = 1.0;
  double slowdown_ = 1.0;
  AgentMeasures measures_;  // restart_seconds: restart_cost()
  std::optional<GradStats> grad_;
  long long fits_ = 0;

  std::shared_ptr<SpeedupFunction> speedup_;
  PerfParams speedup_perf_;
  GradStats speedup_grad_;
};

}  // namespace pollux::sim

#endif  // POLLUX_SIM_SIM_JOB_H

// The policies libgoodput has, registered once. Every front end reads this
// table rather than spelling policy names: sched/pollux (the entry marked
// `scheduler`; it takes no policy name), pollux-sim's --policy, its
// --list-policies, report and plots, and the fidelity script (through
// pollux-sim --list-policies). A policy added to the table
// (policy_registry.cc) is known to all of them; what a front end must tell
// it about each job is its `input`, one of the kinds below.
#ifndef POLLUX_POLICIES_H
#define POLLUX_POLICIES_H

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pollux/policy.h"

namespace pollux {

/// What a front end tells a policy about each job (its JobInfo).
enum class JobInput {
  /// The elastic job description (pollux/job_description.h): goodput
  /// speedups (per GPU type where the policy sees types), a size range
  /// grown as the job is profiled, a restart weighed over the run it began
  /// (sched/pollux's rule). What sched/pollux gives.
  kElastic,
  /// The same, as Sia does it: restarts weighed over the job's whole life,
  /// no node minimum, a job with no model yet worth one GPU on every type,
  /// JobInfo::restarting set, and (pollux-sim --sia-calibration) Sia's
  /// per-model restart penalty as the job's restart_delay.
  kElasticWholeLife,
  /// A rigid job at the user's size: requested_gpus = max_replicas, no model.
  kRigid,
  /// Slurm's sched/backfill's: a rigid job at the user's size and batch
  /// (as kRigid) with its time limit (JobInfo::time_limit) and, running,
  /// the time it has run (JobInfo::run_time).
  kRigidTimeLimit,
  /// Optimus+Oracle's: the size the user's batch allows and the oracle
  /// (JobInfo::iteration_time, remaining_iterations) from the traces.
  kOracle,
};

/// Whether a policy places jobs by GPU type (JobInfo::speedup_by_type,
/// NodeInfo::type) on a cluster of several types.
enum class GpuTypeUse {
  kBlind,     ///< never: one speedup per job, placements over any GPUs
  kAware,     ///< yes, unless the front end asks for the type-agnostic variant (pollux-sim --type-agnostic)
  kRequired,  ///< always
};

struct PolicyEntry {
  std::string_view name;   ///< make_policy's, Policy::name()'s, pollux-sim's --policy
  std::string_view label;  ///< for people: reports, plots, tables ("Optimus+Oracle")
  /// What it does, in one line (pollux-sim --list-policies).
  std::string_view summary;
  JobInput input;
  /// Goodput-driven: each job adapts its batch size to its GPUs and its
  /// agent fits the models the policy reads; else jobs run the user's batch.
  bool adaptive;
  GpuTypeUse types;
  /// It places as the paper's baselines do (most free GPUs first, whole
  /// nodes first): its placements list the largest node share first, and
  /// neither interference avoidance nor the per-job node limit binds it.
  /// False: Pollux's placement (node order, both constraints).
  bool greedy_placement;
  /// The one policy sched/pollux runs (scheduler_policy(); its input is
  /// kElastic, what the plugin's round gives), and the only one pollux-sim
  /// runs sched/pollux's arrivals rounds with.
  bool scheduler;
  double fairness_p;  ///< its default PolicyOptions::fairness_p
  /// Builds it (throws std::invalid_argument for options out of range).
  std::unique_ptr<Policy> (*make)(const PolicyOptions& options);
  /// Empty: this build has it; else why not ("built without GLPK; ...").
  std::string_view missing;
};

/// Every policy, in the order front ends list them (the paper's: Pollux,
/// Optimus+Oracle, Tiresias; then the Sia-like one and Slurm's backfill).
const std::vector<PolicyEntry>& policies();

/// The entry named `name`; nullptr when there is none.
const PolicyEntry* find_policy(std::string_view name);

/// The entry sched/pollux runs (the one marked `scheduler`).
const PolicyEntry& scheduler_policy();

/// The names of the policies `keep` accepts (all when null), joined by
/// `sep`, for messages ("pollux, optimus, tiresias, sia or backfill" with last_sep
/// " or ").
std::string policy_names(bool (*keep)(const PolicyEntry&), std::string_view sep = ", ",
                         std::string_view last_sep = " or ");

}  // namespace pollux

#endif  // POLLUX_POLICIES_H

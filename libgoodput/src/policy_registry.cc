// The policy table and make_policy (see pollux/policies.h, pollux/policy.h).
#include "pollux/policies.h"

#include "pollux/sia_policy.h"
#include "policy_common.h"

namespace pollux {

namespace detail {
// Each defined in its policy's file (<name>_policy.cc), known only to the
// table: a policy added touches its own file, this one and Makefile.am.
std::unique_ptr<Policy> make_pollux_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_tiresias_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_optimus_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_backfill_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_sia_policy(const PolicyOptions& options);
}  // namespace detail

const std::vector<PolicyEntry>& policies() {
  // name, label, summary, input, adaptive, types, greedy_placement, scheduler, fairness_p, make, missing
  static const std::vector<PolicyEntry> table = {
      {"pollux", "Pollux",
       "goodput-driven: GPUs by the jobs' fitted goodput models, each job adapting its batch to its GPUs (OSDI'21)",
       JobInput::kElastic, true, GpuTypeUse::kAware, false, true, -1.0, detail::make_pollux_policy, {}},
      {"optimus", "Optimus+Oracle",
       "the user's batch; GPUs go where they cut predicted remaining time most, from an oracle of remaining work",
       JobInput::kOracle, false, GpuTypeUse::kBlind, true, false, -1.0, detail::make_optimus_policy, {}},
      {"tiresias", "Tiresias", "the user's GPUs and batch; two-queue least attained service",
       JobInput::kRigid, false, GpuTypeUse::kBlind, true, false, -1.0, detail::make_tiresias_policy, {}},
      {"sia", "Sia-like",
       "goodput-driven on several GPU types: an integer program over (type, count) configurations (SOSP'23; GLPK)",
       JobInput::kElasticWholeLife, true, GpuTypeUse::kRequired, true, false, kSiaDefaultP, detail::make_sia_policy,
       SiaPolicy::available() ? "" : "built without GLPK; install libglpk-dev and re-run configure"},
      {"backfill", "Slurm backfill",
       "Slurm's sched/backfill: the user's GPUs and batch in submit order; a later job first where, by the "
       "time limits, it delays no earlier one",
       JobInput::kRigidTimeLimit, false, GpuTypeUse::kBlind, true, false, -1.0, detail::make_backfill_policy, {}},
  };
  return table;
}

const PolicyEntry* find_policy(std::string_view name) {
  for (const PolicyEntry& e : policies())
    if (e.name == name) return &e;
  return nullptr;
}

const PolicyEntry& scheduler_policy() {
  for (const PolicyEntry& e : policies())
    if (e.scheduler) return e;
  return policies().front();  // unreachable: the table marks one
}

std::string policy_names(bool (*keep)(const PolicyEntry&), std::string_view sep, std::string_view last_sep) {
  std::vector<std::string_view> names;
  for (const PolicyEntry& e : policies())
    if (keep == nullptr || keep(e)) names.push_back(e.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out.append(i == 0 ? "" : i + 1 == names.size() ? last_sep : sep).append(names[i]);
  return out;
}

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& options) {
  const PolicyEntry* e = find_policy(name);
  if (e == nullptr) return nullptr;
  detail::validate_options(options);
  return e->make(options);
}

}  // namespace pollux

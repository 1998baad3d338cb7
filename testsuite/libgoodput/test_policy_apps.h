// Realistic jobs for the policy tests and benchmarks: goodput models of the
// paper's applications and random clusters, jobs and current allocations.
//
// The PerfParams were fitted once with fit_perf_params() on the artifact's
// placements.csv of each application (traces/pollux-osdi21, Apache-2.0);
// the gradient statistics are mid-training values of its validation files
// at the initial batch size; the batch limits follow the traces' README.
// They are copied here because tests must not read shared/ at run time.
#ifndef POLLUX_TEST_POLICY_APPS_H
#define POLLUX_TEST_POLICY_APPS_H

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "pollux/policies.h"
#include "pollux/policy.h"
#include "pollux/speedup.h"
#include "pollux/typed_goodput.h"

namespace pollux::testing {

struct App {
  const char* name;
  PerfParams perf;
  GradStats grad;
  BatchLimits limits;
};

inline const std::vector<App>& apps() {
  static const std::vector<App> kApps{
      {"cifar10", {0.0173, 0.000702, 0.121, 0.00239, 0.0316, 0.00101, 2.0}, {0.13, 4.98}, {128, 4096, 32, 1024, true}},
      {"imagenet", {0.0645, 0.00447, 0.299, 0.00555, 0.0768, 0.000708, 2.49}, {0.346, 19.7}, {200, 12800, 20, 200, true}},
      {"bert", {0.169, 0.0586, 1.35, 0.0142, 0.288, 0.00979, 1.9}, {1.0, 94.0}, {12, 384, 4, 12, true}},
      {"deepspeech2", {0.304, 0.0242, 0.378, 0.0285, 0.087, 0.00186, 1.43}, {1.0, 1060.0}, {20, 640, 10, 80, true}},
      {"yolov3", {0.183, 0.026, 0.699, 0.0234, 0.139, 0.0215, 1.16}, {1.0, 54.0}, {8, 512, 4, 8, true}},
  };
  return kApps;
}

/// A job's speedup function for `app`; shared so that the memo is reused.
inline SpeedupFn app_speedup(const App& app) {
  auto f = std::make_shared<SpeedupFunction>(GoodputModel(app.perf, app.grad, app.limits.init_batch), app.limits);
  return [f](int nodes, int replicas) { return (*f)(nodes, replicas); };
}

/// A job with speedup `fn`, submitted at time `id`.
inline JobInfo job(std::uint64_t id, SpeedupFn fn, int max_replicas, double age = 1e5, int restarts = 0) {
  JobInfo j;
  j.id = id;
  j.submit_time = double(id);
  j.speedup = std::move(fn);
  j.max_replicas = max_replicas;
  j.age = age;
  j.restarts = restarts;
  return j;
}

/// The same with per-GPU-type speedups (JobInfo::speedup_by_type).
inline JobInfo typed_job(std::uint64_t id, std::vector<SpeedupFn> fns, int max_replicas, double age = 1e5,
                         int restarts = 0) {
  JobInfo j = job(id, nullptr, max_replicas, age, restarts);
  j.speedup_by_type = std::move(fns);
  return j;
}

/// The artifact simulator's max_replicas for a job that has profiled up to
/// `profiled` replicas: min(max(2 profiled, 1), 64, M_max / m_min).
inline int artifact_max_replicas(const App& app, int profiled) {
  return std::min({std::max(2 * profiled, 1), 64, static_cast<int>(app.limits.max_batch / app.limits.min_atomic)});
}

struct Instance {
  std::vector<JobInfo> jobs;
  std::vector<NodeInfo> nodes;
  std::vector<Placement> current;
};

/// A random round: `num_nodes` nodes of `gpus_per_node` GPUs (0: random 1-8
/// per node), `num_jobs` jobs mixing application models and jobs without a
/// model (`linear_share` of them), random ages, restarts and limits, and a
/// random current allocation that respects node capacity (but not
/// necessarily the other constraints). By default jobs of one application
/// share a speedup function and restarts are arbitrary (edge cases);
/// `realistic` gives every job its own function (its own memo, as a
/// scheduler has) and at most one restart per two minutes of age.
inline Instance random_instance(std::mt19937_64& rng, int num_nodes, int gpus_per_node, int num_jobs,
                                double linear_share = 0.25, bool realistic = false) {
  Instance in;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int n = 0; n < num_nodes; ++n) in.nodes.push_back({gpus_per_node > 0 ? gpus_per_node : pick(1, 8)});
  std::vector<SpeedupFn> fns;
  for (const App& a : apps()) fns.push_back(app_speedup(a));
  std::vector<int> free;
  for (const NodeInfo& n : in.nodes) free.push_back(n.gpus);
  for (int j = 0; j < num_jobs; ++j) {
    JobInfo job;
    job.id = 1000 + static_cast<std::uint64_t>(j) * 7;
    job.submit_time = pick(0, 20000);
    job.age = pick(0, 3) == 0 ? pick(0, 120) : pick(60, 20000);
    job.restarts = realistic ? std::min(pick(0, 4), static_cast<int>(job.age / 120)) : pick(0, 4);
    job.attained_service = pick(0, 3) == 0 ? 0.0 : unit(rng) * 1e5;
    const int app = pick(0, static_cast<int>(apps().size()) - 1);
    if (unit(rng) >= linear_share) job.speedup = realistic ? app_speedup(apps()[app]) : fns[app];
    job.min_replicas = pick(0, 4) == 0 ? pick(1, 2) : 0;
    job.max_replicas = std::max(job.min_replicas, artifact_max_replicas(apps()[app], pick(0, 16)));
    job.requested_gpus = pick(std::max(1, job.min_replicas), std::max(1, std::min(job.max_replicas, 8)));
    in.jobs.push_back(job);
    // Current placement: empty, or a few GPUs on random nodes with room.
    Placement p;
    if (pick(0, 2) > 0) {
      const int spread = pick(1, 3);
      for (int k = 0; k < spread; ++k) {
        const int n = pick(0, num_nodes - 1);
        if (free[n] == 0) continue;
        const int g = pick(1, free[n]);
        p.push_back({n, g});
        free[n] -= g;
      }
    }
    in.current.push_back(normalize_placement(p));
  }
  return in;
}

/// A random round on `types` GPU types (contiguous blocks of nodes, type t
/// about 1 + t times as fast as type 0 at one micro-step, each application
/// a little differently): random_instance(realistic), then every job with
/// a model gets per-type speedups from TypedGoodput - fitted on the type of
/// its current placement (or type 0), estimated elsewhere from the seed
/// ratios - and every job without one linear per-type speedups.
inline Instance typed_instance(std::mt19937_64& rng, int num_nodes, int gpus_per_node, int num_jobs, int types,
                               double linear_share = 0.25) {
  Instance in = random_instance(rng, num_nodes, gpus_per_node, num_jobs, linear_share, true);
  const int block = (num_nodes + types - 1) / types;
  for (int n = 0; n < num_nodes; ++n) in.nodes[n].type = std::min(n / block, types - 1);
  std::vector<double> seed;
  for (int t = 0; t < types; ++t) seed.push_back(1.0 + t);
  const TypeRatios ratios(seed);
  std::uniform_int_distribution<int> app_of(0, static_cast<int>(apps().size()) - 1);
  for (std::size_t j = 0; j < in.jobs.size(); ++j) {
    JobInfo& job = in.jobs[j];
    // One type per job: drop a current placement that mixes them.
    Placement& cur = in.current[j];
    int t0 = cur.empty() ? 0 : in.nodes[cur.front().node].type;
    for (const NodeShare& s : cur)
      if (in.nodes[s.node].type != t0) cur.clear();
    if (cur.empty()) t0 = 0;
    const App& a = apps()[app_of(rng)];
    std::vector<std::optional<PerfParams>> fitted(types);
    if (job.speedup) {
      PerfParams p = a.perf;
      const double own = 1.0 + t0 * (0.5 + 0.25 * static_cast<double>(j % 3));  // its true speed on t0
      p.alpha_c /= own;
      p.beta_c /= own;
      fitted[t0] = p;
    }
    job.speedup_by_type = TypedGoodput(fitted, a.grad, a.limits, ratios).speedups();
    job.speedup = nullptr;
  }
  return in;
}

/// The policies of libgoodput's table this build has that schedule a
/// cluster of one GPU type (all but those that require typed nodes, Sia's:
/// testsuite/sim/test_sia.cc): what the generic policy tests run, so that a
/// policy added to the table is tested by them.
inline std::vector<const PolicyEntry*> one_type_policies() {
  std::vector<const PolicyEntry*> out;
  for (const PolicyEntry& e : policies())
    if (e.missing.empty() && e.types != GpuTypeUse::kRequired) out.push_back(&e);
  return out;
}

}  // namespace pollux::testing

#endif  // POLLUX_TEST_POLICY_APPS_H

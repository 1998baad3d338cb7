// An independent implementation of the Pollux fitness (reference section 4
// and doc/policy.md), written from the specification, to check what the
// policy reports and to compare allocations in tests.
#ifndef POLLUX_TEST_POLICY_REFERENCE_H
#define POLLUX_TEST_POLICY_REFERENCE_H

#include <algorithm>
#include <cmath>
#include <vector>

#include "pollux/policy.h"

namespace pollux::testing {

/// speedup(N, R) / speedup(fair share), the artifact's normalisation; a job
/// without a model is linear, R / fair replicas.
inline double normalised_speedup(const JobInfo& job, const std::vector<NodeInfo>& nodes, std::size_t num_jobs,
                                 int n, int r) {
  if (r <= 0) return 0.0;
  long total = 0;
  for (const NodeInfo& x : nodes) total += x.gpus;
  const long fair_r = std::max<long>(1, (total + long(num_jobs) - 1) / long(num_jobs));
  const long fair_n = std::min(fair_r, (long(nodes.size()) + total - 1) / total);
  if (!job.speedup) return double(r) / double(fair_r);
  return job.speedup(n, r) / job.speedup(int(fair_n), int(fair_r));
}

inline double reference_fitness(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                const std::vector<Placement>& current, const std::vector<Placement>& alloc,
                                const PolicyOptions& o) {
  long total = 0;
  for (const NodeInfo& x : nodes) total += x.gpus;
  double sum = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& j = jobs[i];
    const int r = placement_gpus(alloc[i]), n = placement_nodes(alloc[i]);
    double x = normalised_speedup(j, nodes, jobs.size(), n, r) * double(nodes.size()) / double(total);
    if (!(alloc[i] == normalize_placement(current[i])))
      x *= std::max(j.age - j.restarts * j.restart_delay, 0.0) / (j.age + j.restart_delay);
    sum += o.fairness_p == 0 ? std::log(x + 1e-3) : std::pow(x + 1e-3, o.fairness_p);
  }
  const double mean = sum / double(jobs.size());
  return o.fairness_p == 0 ? std::exp(mean) : std::pow(mean, 1.0 / o.fairness_p);
}

}  // namespace pollux::testing

#endif  // POLLUX_TEST_POLICY_REFERENCE_H

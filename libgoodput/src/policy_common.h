// Internal pieces shared by the policies: input validation, option validation,
// job orders and the baselines' greedy placement. (Their factories are
// declared beside the table, policy_registry.cc.)
#ifndef POLLUX_SRC_POLICY_COMMON_H
#define POLLUX_SRC_POLICY_COMMON_H

#include <chrono>
#include <string_view>
#include <vector>

#include "pollux/policy.h"

namespace pollux::detail {

/// Throws std::invalid_argument naming the first inconsistency: `current`
/// not one entry per job, a node index out of range or a negative count in
/// a current placement, negative node GPUs, negative or non-finite job
/// fields, duplicate job ids. `policy` prefixes the message.
void validate_round(std::string_view policy, const std::vector<JobInfo>& jobs,
                    const std::vector<NodeInfo>& nodes, const std::vector<Placement>& current);

/// Throws std::invalid_argument for options no policy can run with.
void validate_options(const PolicyOptions& options);

/// The current placements, normalised (sorted, merged, no zeros).
std::vector<Placement> normalized(const std::vector<Placement>& current);

/// Indices of `jobs` in FIFO order: submit time, then id.
std::vector<int> fifo_order(const std::vector<JobInfo>& jobs);

/// The baselines' placement: `gpus` GPUs taken from the nodes with the most
/// free GPUs first (lowest index on ties), which also uses the fewest nodes.
/// With `uniform`, a multi-node placement uses k nodes x gpus/k GPUs with
/// the smallest feasible k. Subtracts from `free`; empty if it cannot fit.
Placement place_most_free(std::vector<int>& free, int gpus, bool uniform);

/// The baselines' placement of sizes already decided: in `order`, a job
/// whose current placement has exactly size[i] GPUs and still fits keeps
/// it; then, in `place_order`, each other job with size[i] > 0 gets
/// place_most_free(), trying smaller sizes down to smallest[i] if it cannot
/// be placed (it waits below that).
std::vector<Placement> keep_or_place(const std::vector<NodeInfo>& nodes, const std::vector<Placement>& current,
                                     const std::vector<int>& size, const std::vector<int>& smallest,
                                     const std::vector<int>& order, const std::vector<int>& place_order,
                                     bool uniform);

/// Wall-clock seconds since construction.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace pollux::detail

#endif  // POLLUX_SRC_POLICY_COMMON_H

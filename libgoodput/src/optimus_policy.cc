// Optimus+Oracle (+TunedJobs), the paper's second baseline. Each job keeps
// its user-given batch size (the caller's business); the policy sees
// JobInfo::iteration_time(R) and the exact remaining_iterations.
//
// As in the artifact: in FIFO order every job gets one GPU (min_replicas,
// if more) while GPUs remain; then GPUs go one at a time to the job with
// the largest marginal
// gain (iteration_time(R) - iteration_time(R+1)) * remaining_iterations
// (earliest job on ties), never beyond max_replicas, while a gain is
// positive. A job without iteration_time has no gain (it keeps one GPU);
// remaining_iterations <= 0 counts as 1 (the artifact's convention for a job
// in its last epoch). Placement: a job whose size is unchanged keeps its
// placement; the others, smallest first, go to the nodes with the most free
// GPUs. Interference avoidance and max_nodes_per_job do not apply;
// uniform_gpus_per_node does (a size that cannot be placed uniformly is
// lowered until it can).
#include <algorithm>
#include <cmath>
#include <queue>

#include "policy_common.h"

namespace pollux::detail {
namespace {

class OptimusPolicy final : public Policy {
 public:
  explicit OptimusPolicy(const PolicyOptions& options) : Policy(options) {}
  std::string_view name() const noexcept override { return "optimus"; }

  std::vector<Placement> optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                  const std::vector<Placement>& current_in, double) override {
    const Stopwatch clock;
    validate_round(name(), jobs, nodes, current_in);
    const std::vector<Placement> current = normalized(current_in);
    const std::vector<int> order = fifo_order(jobs);
    std::vector<int> rank(jobs.size());
    for (std::size_t k = 0; k < order.size(); ++k) rank[order[k]] = static_cast<int>(k);

    long left = 0;
    for (const NodeInfo& n : nodes) left += n.gpus;
    std::vector<int> size(jobs.size(), 0);
    for (int i : order) {
      const int first = std::max(jobs[i].min_replicas, 1);
      if (first <= left && first <= jobs[i].max_replicas) {
        size[i] = first;
        left -= first;
      }
    }

    // Max-heap on (gain, earliest job first).
    struct Entry {
      double gain;
      int rank, job;
      bool operator<(const Entry& o) const { return gain != o.gain ? gain < o.gain : rank > o.rank; }
    };
    std::priority_queue<Entry> heap;
    auto push = [&](int i) {
      const double g = gain(jobs[i], size[i]);
      if (g > 0) heap.push({g, rank[i], i});
    };
    for (int i : order)
      if (size[i] > 0) push(i);
    while (left > 0 && !heap.empty()) {
      const int i = heap.top().job;
      heap.pop();
      ++size[i];
      --left;
      push(i);
    }

    // Placement: unchanged sizes keep their place, then smallest first.
    std::vector<int> by_size = order, smallest(jobs.size());
    std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) { return size[a] < size[b]; });
    for (std::size_t i = 0; i < jobs.size(); ++i) smallest[i] = std::max(jobs[i].min_replicas, 1);
    const std::vector<Placement> out =
        keep_or_place(nodes, current, size, smallest, order, by_size, options_.uniform_gpus_per_node);

    report_ = PolicyReport{0.0, 0, clock.seconds()};
    return out;
  }

 private:
  static double gain(const JobInfo& j, int replicas) {
    if (!j.iteration_time || replicas + 1 > j.max_replicas) return 0.0;
    const double remaining = j.remaining_iterations > 0 ? j.remaining_iterations : 1.0;
    const double g = (j.iteration_time(replicas) - j.iteration_time(replicas + 1)) * remaining;
    return std::isfinite(g) ? g : 0.0;
  }
};

}  // namespace

std::unique_ptr<Policy> make_optimus_policy(const PolicyOptions& options) {
  return std::make_unique<OptimusPolicy>(options);
}

}  // namespace pollux::detail

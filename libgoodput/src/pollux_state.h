// A sparse, incrementally maintained allocation for the Pollux local
// search: per-job placements and terms, per-node free GPUs, occupants and
// distributed owner, free-GPU buckets for placement queries, and an undo
// log. A change to one job updates O(its nodes) state and one term.
#ifndef POLLUX_SRC_POLLUX_STATE_H
#define POLLUX_SRC_POLLUX_STATE_H

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "pollux_problem.h"

namespace pollux::detail {

class ClusterState {
 public:
  explicit ClusterState(const PolluxProblem& pb);

  const PolluxProblem& problem() const noexcept { return pb_; }
  const Placement& placement(int j) const noexcept { return place_[j]; }
  int gpus(int j) const noexcept { return gpus_[j]; }
  double term(int j) const noexcept { return term_[j]; }
  /// Sum of all terms (compensated summation).
  double sum() const noexcept { return sum_ + carry_; }
  int free(int node) const noexcept { return pb_.capacity(node) - used_[node]; }
  /// Free GPUs in the whole cluster.
  long free_total() const noexcept { return pb_.total_gpus() - used_total_; }
  /// GPUs job j holds on `node`.
  int own(int j, int node) const noexcept;
  const std::vector<int>& occupants(int node) const noexcept { return occupants_[node]; }
  /// The first job >= `from` that holds no GPUs, or -1 (a word-wise scan:
  /// the search looks for such jobs among thousands often).
  int next_idle(int from) const noexcept;
  /// The multi-node job on `node` under interference avoidance, or -1.
  int owner(int node) const noexcept { return owner_[node]; }
  std::vector<Placement> placements() const { return place_; }

  /// Whether j may hold `p` with every other job where it is: capacity,
  /// min/max GPUs, max nodes, interference avoidance, uniformity, one GPU
  /// type.
  bool fits(int j, const Placement& p) const;
  /// A placement of `gpus` GPUs for j given the other jobs (j's own GPUs
  /// count as free), on nodes of one GPU type (on several types, the type
  /// where j's term is highest): one node if any can take them (best fit), else the
  /// fewest nodes (largest first, best fit for the rest), or with
  /// uniform_gpus_per_node the fewest equal shares (best fit). Never uses
  /// node `avoid`. False if none satisfies the constraints. `out` is
  /// normalised.
  bool pack(int j, int gpus, Placement& out, int avoid = -1) const;
  /// `nodes` nodes of gpus / nodes GPUs each for j (best fit), allowed for
  /// a multi-node job; false if gpus is not a multiple or they do not fit.
  bool pack_even(int j, int gpus, int nodes, Placement& out, int avoid = -1) const;
  /// With a generator, pack() breaks ties between equally good nodes at
  /// random (for perturbations); without, by a fixed order.
  void set_tie_breaker(std::mt19937_64* rng) noexcept { ties_ = rng; }

  /// Gives j placement `p` (which must fit) and logs the change.
  void assign(int j, const Placement& p);
  std::size_t mark() const noexcept { return log_.size(); }
  /// Undoes every assign() after `mark`.
  void rollback(std::size_t mark);
  /// Sum of term changes since `mark`, from the touched jobs only (exact
  /// to their magnitude), and the sum of their old terms' magnitudes.
  double delta_since(std::size_t mark, double* scale = nullptr) const;
  /// Jobs changed since `mark`, each once.
  std::vector<int> touched_since(std::size_t mark) const;
  /// Forgets the undo log (the changes stay).
  void commit() { log_.clear(); }

 private:
  struct Undo {
    int job;
    Placement old;
    double old_term;
  };
  // Nodes grouped by free GPUs, for best-fit and largest-first queries.
  struct Buckets {
    std::vector<std::vector<int>> by_free;
    std::vector<int> pos, at;  // index in its bucket, bucket (-1: none)
    void init(int nodes, int max_free);
    void put(int node, int f);
    void drop(int node);
  };
  bool allowed_multi(int j, int node) const noexcept;
  // Whether j may use `node` in the packing under way (type_filter_).
  bool usable(int j, int node) const noexcept {
    return pb_.allowed(j, node) && (type_filter_ < 0 || pb_.type(node) == type_filter_);
  }
  bool pack_in(int j, int gpus, Placement& out, int avoid) const;
  bool pack_even_in(int j, int gpus, int nodes, Placement& out, int avoid) const;
  // On several GPU types: `pack` over each type j may use, the best term wins.
  template <typename Pack>
  bool best_over_types(int j, int gpus, Placement& out, Pack pack) const;
  void refresh(int node);
  void set(int j, const Placement& p);
  // Smallest avail >= need among nodes j may use (multi: allowed_multi),
  // skipping `skip` and `avoid`; -1 if none. Own nodes count their own GPUs
  // as free.
  int best_fit(int j, int need, bool multi, const Placement& skip, int avoid) const;
  int largest(int j, const Placement& skip, int avoid) const;
  // A node of bucket `b` that is neither j's nor skipped nor `avoid`; -1 if none.
  int pick(const std::vector<int>& b, int j, const Placement& skip, int avoid) const;
  int avail(int j, int node) const noexcept { return free(node) + own(j, node); }

  const PolluxProblem& pb_;
  bool interference_;
  std::vector<Placement> place_;
  std::vector<int> gpus_;
  std::vector<std::uint64_t> idle_;  // bit j: job j holds no GPUs
  std::vector<double> term_;
  double sum_ = 0, carry_ = 0;
  std::vector<int> used_, owner_;
  long used_total_ = 0;
  std::vector<std::vector<int>> occupants_;
  // Per GPU type: every node; nodes without a multi-node owner. A packing
  // on one type scans only that type's nodes.
  std::vector<Buckets> all_, open_;
  std::vector<long> type_free_;  // free GPUs per GPU type
  // Whether `gpus` GPUs of type t could fit j at all (j's own count as free).
  bool type_has_room(int j, int t, int gpus) const noexcept;
  Buckets& all_of(int node) { return all_[static_cast<std::size_t>(pb_.type(node))]; }
  Buckets& open_of(int node) { return open_[static_cast<std::size_t>(pb_.type(node))]; }
  // The buckets of the type being packed (type 0 when untyped).
  std::size_t bucket_type() const noexcept { return type_filter_ < 0 ? 0 : static_cast<std::size_t>(type_filter_); }
  std::vector<Undo> log_;
  std::mt19937_64* ties_ = nullptr;
  mutable int type_filter_ = -1;  // while packing: the only GPU type to use
  mutable Placement type_scratch_;
};

}  // namespace pollux::detail

#endif  // POLLUX_SRC_POLLUX_STATE_H

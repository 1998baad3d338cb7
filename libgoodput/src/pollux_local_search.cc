// Greedy construction plus local search for the Pollux fitness.
//
// The fitness is a monotone function of a sum of per-job terms, and a job's
// term depends only on its GPUs, whether it spans several nodes, and whether
// it moved (the restart penalty). So every move below changes one or a few
// terms and is scored by their difference; ClusterState keeps node
// capacities, interference claims and free-GPU buckets incrementally.
//
// 1. Two starts, each completed by a lazy greedy that repeatedly grants the
//    step (grow a job by 1..K GPUs, K = largest node, or give it back its
//    current placement) with the best gain per GPU: one from the current
//    allocation (what fits, in priority order), one from empty.
// 2. Descent on each start, until a pass improves nothing (the better
//    result is kept):
//    - best response: each job alone takes its best placement among
//      0, R-K..R+K, R/4, R/2, 2R, 3R, 4R, max and all free GPUs (packed:
//      one node if possible, else fewest nodes) and its current placement;
//    - transfers: jobs with the highest marginal gain take one GPU, or a
//      whole node share, from jobs with the lowest marginal loss, both
//      then re-placing themselves;
//    - re-placements: a moved job goes back to its current placement, or a
//      multi-node job onto one node, evicting what is in the way; evicted
//      jobs re-place themselves.
//    A compound move is kept only if the sum of the touched terms rises.
// 3. Ruin and recreate until the budget is spent, many tries fail, or it
//    has spent kMaxPerturbation evaluations: a job and its node neighbours
//    (or a few random jobs) are emptied and rebuilt by the greedy, with
//    random weights and ties, and best responses; kept only if better.
//    The cap binds only on large rounds (thousands of jobs), where the
//    perturbations still find small gains after tens of millions of
//    evaluations (doc/benchmarks.md: 2048 nodes, 4000 jobs, 3 GPU types);
//    a round of up to a few hundred jobs stops on its own far below it.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "pollux_search.h"
#include "pollux_state.h"

namespace pollux::detail {
namespace {

using Rng = std::mt19937_64;

class LocalSearch {
 public:
  LocalSearch(const PolluxProblem& pb, long long budget, Rng& rng)
      : pb_(pb),
        budget_(budget),
        rng_(rng),
        step_(std::max(pb.max_capacity(), 1)),
        // For p > 0 every term is (x + 1e-3)^p, which is far below 1 for
        // large p (0.2^50 ~ 1e-35): an absolute floor of 1e-12 would reject
        // every gain and starve the cluster. Scale the floor to the
        // smallest term instead. For p <= 0 terms are O(1) or larger.
        unit_(pb.options().fairness_p > 0 ? std::min(1.0, pb.idle_term()) : 1.0) {}

  SearchResult run() {
    SearchResult out;
    const int jobs = pb_.num_jobs();
    if (jobs == 0) return out;
    std::vector<int> all(jobs);
    std::iota(all.begin(), all.end(), 0);

    ClusterState from_current(pb_), from_empty(pb_);
    for (int j = 0; j < jobs; ++j)
      if (from_current.fits(j, pb_.current(j))) from_current.assign(j, pb_.current(j));
    greedy_fill(from_current, all);
    greedy_fill(from_empty, all);
    descent(from_current, all);
    descent(from_empty, all);
    ClusterState* best = from_empty.sum() > from_current.sum() + tolerance(from_current.sum()) ? &from_empty : &from_current;
    // A third start when some job is pinned (its restart penalty zeroes any
    // move: it runs where it is or not at all): only the pinned jobs keep
    // their placements, the rest is rebuilt around them. From the current
    // start the others keep placements that can leave no room for a job
    // that needs several GPUs, and descent then trades the pinned job for
    // it (a random 6-job round: fitness 0.0059 against the GA's 0.18).
    ClusterState from_pinned(pb_);
    bool pinned = false;
    for (int j = 0; j < jobs; ++j) {
      const Placement& cur = pb_.current(j);
      if (!cur.empty() && pb_.term(j, static_cast<int>(cur.size()), placement_gpus(cur), true, pb_.type_of(cur)) <= pb_.idle_term() &&
          from_pinned.fits(j, cur)) {
        ++evals_;
        from_pinned.assign(j, cur);
        pinned = true;
      }
    }
    if (pinned && budget_left()) {
      greedy_fill(from_pinned, all);
      descent(from_pinned, all);
      if (from_pinned.sum() > best->sum() + tolerance(best->sum())) best = &from_pinned;
    }
    ClusterState& s = *best;
    ruin_and_recreate(s);
    out.alloc = s.placements();
    out.evaluations = evals_;
    return out;
  }

 private:
  struct Step {
    double value = 0;
    Placement p;
    bool ok = false;
  };

  // What a sum or term must gain to count as better (float noise aside).
  double tolerance(double magnitude) const { return 1e-12 * (unit_ + std::fabs(magnitude)); }
  bool budget_left() const { return evals_ < budget_; }
  double eval(int j, const Placement& p) {
    ++evals_;
    return pb_.term(j, p);
  }

  // The growth step of j with the best gain per added GPU.
  Step best_growth(ClusterState& s, int j) {
    Step best;
    const int r = s.gpus(j);
    const double t0 = s.term(j);
    const double floor = tolerance(t0);
    auto consider = [&](const Placement& p) {
      const double v = (eval(j, p) - t0) / double(placement_gpus(p) - r);
      if (v > floor && v > best.value) {
        best.value = v;
        best.p = p;  // (assigned into its capacity: no allocation each time)
        best.ok = true;
      }
    };
    const int lo = std::max(r + 1, pb_.min_gpus(j));
    const int hi = std::min(pb_.max_gpus(j), lo + step_ - 1);
    for (int g = lo; g <= hi; ++g)
      if (s.pack(j, g, scratch_)) consider(scratch_);
    const Placement& cur = pb_.current(j);
    if (placement_gpus(cur) > r && !(s.placement(j) == cur) && s.fits(j, cur)) consider(cur);
    return best;
  }

  // Lazy greedy: grant the best step per GPU until none gains. With
  // `weight`, a job's steps are ranked by value x weight[job] (perturbation).
  void greedy_fill(ClusterState& s, const std::vector<int>& jobs, const std::vector<double>* weight = nullptr) {
    struct Item {
      double value;
      int job;
      long stamp;
      bool operator<(const Item& o) const { return value != o.value ? value < o.value : job > o.job; }
    };
    std::priority_queue<Item> heap;
    std::vector<long>& stamp = stamps_;
    stamp.resize(pb_.num_jobs());
    for (int j : jobs) stamp[j] = 0;
    auto rank = [&](const Step& st, int j) { return weight != nullptr ? st.value * (*weight)[j] : st.value; };
    for (int j : jobs) {
      const Step st = best_growth(s, j);
      if (st.ok) heap.push({rank(st, j), j, stamp[j]});
    }
    while (!heap.empty()) {
      const Item top = heap.top();
      heap.pop();
      if (top.stamp != stamp[top.job]) continue;
      const int j = top.job;
      Step st = best_growth(s, j);
      ++stamp[j];
      if (!st.ok) continue;
      if (!heap.empty() && rank(st, j) < heap.top().value) {
        heap.push({rank(st, j), j, stamp[j]});
        continue;
      }
      s.assign(j, st.p);
      st = best_growth(s, j);
      if (st.ok) heap.push({rank(st, j), j, stamp[j]});
    }
  }

  // Sizes worth trying for j near `around` GPUs: within K, the large jumps
  // (x1/4, x1/2, x2, x3, x4, the maximum) that a restart penalty can
  // require, and all the free GPUs j could use.
  const std::vector<int>& sizes(const ClusterState& s, int j, int around) {
    sizes_.clear();
    const int lo = std::max(pb_.min_gpus(j), around - step_), hi = std::min(pb_.max_gpus(j), around + step_);
    for (int g = lo; g <= hi; ++g) sizes_.push_back(g);
    const long room = s.free_total() + s.gpus(j);
    for (long g : {long(around) / 4, long(around) / 2, 2L * around, 3L * around, 4L * around, long(pb_.max_gpus(j)), room})
      if ((g < lo || g > hi) && g >= pb_.min_gpus(j) && g <= pb_.max_gpus(j) && g <= room)
        sizes_.push_back(static_cast<int>(g));
    std::sort(sizes_.begin(), sizes_.end());
    sizes_.erase(std::unique(sizes_.begin(), sizes_.end()), sizes_.end());
    return sizes_;
  }

  // j's best placement given the others, among 0 GPUs, sizes() around
  // `around` (packed) and its current placement; returns its term.
  double best_placement(ClusterState& s, int j, int around, Placement& chosen) {
    double best = -HUGE_VAL;
    auto consider = [&](const Placement& p) {
      const double t = eval(j, p);
      if (t > best) {
        best = t;
        chosen = p;
      }
    };
    consider(Placement{});
    for (int g : sizes(s, j, around))
      if (s.pack(j, g, scratch_)) consider(scratch_);
    const Placement& cur = pb_.current(j);
    if (!cur.empty() && s.fits(j, cur)) consider(cur);
    return best;
  }

  // j alone takes its best placement; true if its term rose.
  // j alone takes its best placement; true if its term rose. On a tie it
  // still gives back GPUs it gains nothing from (e.g. a job whose moved
  // speedup is 0), so that others can use them.
  bool best_response(ClusterState& s, int j) {
    const double t0 = s.term(j);
    Placement chosen;
    const double t = best_placement(s, j, s.gpus(j), chosen);
    const bool better = t > t0 + tolerance(t0), lighter = t >= t0 && placement_gpus(chosen) < s.gpus(j);
    if (!(better || lighter) || chosen == s.placement(j)) return false;
    s.assign(j, chosen);
    return better;
  }

  // Free GPUs go to up to 8 runnable jobs that have none (from a random
  // start), by the greedy: compound moves free GPUs that jobs other than
  // the movers may need.
  void feed_hungry(ClusterState& s) {
    constexpr std::size_t kHungry = 8;
    const int jobs = pb_.num_jobs();
    if (s.free_total() == 0 || jobs == 0) return;
    hungry_.clear();
    const int start = std::uniform_int_distribution<int>(0, jobs - 1)(rng_);
    // The jobs without GPUs from `start` on, wrapping around.
    auto scan = [&](int from, int to) {
      for (int j = s.next_idle(from); j >= 0 && j < to && hungry_.size() < kHungry; j = s.next_idle(j + 1))
        if (pb_.min_gpus(j) <= std::min<long>(pb_.max_gpus(j), s.free_total())) hungry_.push_back(j);
    };
    scan(start, jobs);
    scan(0, start);
    greedy_fill(s, hungry_);
  }

  // Both jobs leave; each in turn takes each of its candidate placements and
  // the other its best reply; the best pair wins if it beats the old one.
  bool pair_reoptimize(ClusterState& s, int a, int b) {
    constexpr long kAllSizes = 64;
    const bool uniform = pb_.options().uniform_gpus_per_node;
    const double before = s.term(a) + s.term(b);
    const int size[2] = {s.gpus(a), s.gpus(b)};
    const std::size_t mark = s.mark();
    s.assign(a, Placement{});
    s.assign(b, Placement{});
    double best = before + tolerance(before);
    Placement best_first, best_second, cand, reply;
    int best_order = -1;
    for (int order = 0; order < 2 && budget_left(); ++order) {
      const int first = order == 0 ? a : b, second = order == 0 ? b : a;
      std::vector<Placement> options{Placement{}};
      // Every size when there are few (the split between the two matters),
      // else the usual candidates.
      const long room = std::min<long>(s.free_total(), pb_.max_gpus(first));
      std::vector<int> split;
      if (room - pb_.min_gpus(first) < kAllSizes)
        for (int g = pb_.min_gpus(first); g <= room; ++g) split.push_back(g);
      else
        split = sizes(s, first, size[order]);
      for (int g : split) {
        if (s.pack(first, g, cand)) options.push_back(cand);
        // With uniform GPUs, how many nodes the first job spreads over
        // decides what is left for the second.
        for (int k = 2; uniform && k <= pb_.max_nodes(first); ++k)
          if (s.pack_even(first, g, k, cand) && !(cand == options.back())) options.push_back(cand);
      }
      if (!pb_.current(first).empty() && s.fits(first, pb_.current(first))) options.push_back(pb_.current(first));
      for (const Placement& p : options) {
        const std::size_t inner = s.mark();
        s.assign(first, p);
        const double value = eval(first, p) + best_placement(s, second, size[1 - order], reply);
        if (value > best) {
          best = value;
          best_first = p;
          best_second = reply;
          best_order = order;
        }
        s.rollback(inner);
      }
    }
    s.rollback(mark);
    if (best_order < 0) return false;
    const int first = best_order == 0 ? a : b, second = best_order == 0 ? b : a;
    s.assign(second, Placement{});
    s.assign(first, best_first);
    s.assign(second, best_second);
    feed_hungry(s);
    return keep_if_better(s, mark);
  }

  // Keeps the changes since `mark` if they raised the sum, else undoes them.
  bool keep_if_better(ClusterState& s, std::size_t mark) {
    double scale = 0;
    const double delta = s.delta_since(mark, &scale);
    if (delta > tolerance(scale)) return true;
    s.rollback(mark);
    return false;
  }

  // j's placement without node `node` (or nothing, if that is not allowed).
  Placement without(const ClusterState& s, int j, int node, int gpus) {
    Placement p = s.placement(j);
    for (NodeShare& x : p)
      if (x.node == node) x.gpus -= gpus;
    p = normalize_placement(std::move(p));
    const int total = placement_gpus(p);
    const bool uniform_ok = !pb_.options().uniform_gpus_per_node || p.size() < 2 ||
                            std::all_of(p.begin(), p.end(), [&](const NodeShare& x) { return x.gpus == p.front().gpus; });
    if (total > 0 && (total < pb_.min_gpus(j) || static_cast<int>(p.size()) < pb_.min_nodes(j) || !uniform_ok))
      p.clear();
    return p;
  }

  // `from` gives one GPU (or its whole share) on `node`; `to` and then
  // `from` re-place themselves. If `to` cannot use the room where it is, a
  // job sharing a node with `to` may first move into it.
  bool transfer(ClusterState& s, int to, int from, int node, bool whole) {
    const int share = s.own(from, node);
    if (share == 0) return false;
    const std::size_t mark = s.mark();
    s.assign(from, without(s, from, node, whole ? share : 1));
    bool grown = best_response(s, to);
    const Placement home = s.placement(to);
    for (std::size_t k = 0; !grown && k < home.size(); ++k)
      for (int m : std::vector<int>(s.occupants(home[k].node))) {
        if (m == to || m == from) continue;
        const std::size_t inner = s.mark();
        if (s.pack(m, s.gpus(m), scratch_, home[k].node)) {
          ++evals_;
          s.assign(m, scratch_);
          if ((grown = best_response(s, to))) break;
        }
        s.rollback(inner);
      }
    if (!grown) {
      s.rollback(mark);
      return false;
    }
    best_response(s, from);
    feed_hungry(s);
    return keep_if_better(s, mark);
  }

  // j takes `target`, making room by taking GPUs one at a time from the
  // other job with the largest share on the node (under interference
  // avoidance, any other multi-node job leaves the node); the jobs that
  // gave GPUs then re-place themselves.
  bool force_place(ClusterState& s, int j, const Placement& target) {
    const std::size_t mark = s.mark();
    const bool multi = target.size() > 1 && pb_.options().interference_avoidance;
    std::vector<int> evicted;
    auto evict = [&](int k, int node, int gpus) {
      s.assign(k, without(s, k, node, gpus));
      if (std::find(evicted.begin(), evicted.end(), k) == evicted.end()) evicted.push_back(k);
    };
    for (const NodeShare& t : target) {
      if (t.gpus > pb_.capacity(t.node)) {
        s.rollback(mark);
        return false;
      }
      if (multi && s.owner(t.node) >= 0 && s.owner(t.node) != j) evict(s.owner(t.node), t.node, s.own(s.owner(t.node), t.node));
      while (t.gpus > s.free(t.node) + s.own(j, t.node)) {
        int victim = -1;
        for (int k : s.occupants(t.node))
          if (k != j && (victim < 0 || s.own(k, t.node) > s.own(victim, t.node))) victim = k;
        if (victim < 0) break;
        evict(victim, t.node, 1);
      }
    }
    if (!s.fits(j, target)) {
      s.rollback(mark);
      return false;
    }
    s.assign(j, target);
    ++evals_;
    for (int k : evicted) best_response(s, k);
    feed_hungry(s);
    return keep_if_better(s, mark);
  }

  // j's placement grown on `node` by one GPU, or to its minimum size.
  Placement grown(const ClusterState& s, int j, int node) const {
    Placement p = s.placement(j);
    p.push_back({node, std::max(1, pb_.min_gpus(j) - s.gpus(j))});
    return normalize_placement(std::move(p));
  }

  // The GPU type j runs on in `s` (-1: none yet, its best type).
  int type_at(const ClusterState& s, int j) const {
    return s.placement(j).empty() ? -1 : pb_.type_of(s.placement(j));
  }

  // Marginal value of one more GPU (per GPU) and of one fewer, ignoring
  // capacity; used only to pick promising transfers.
  double marginal_gain(const ClusterState& s, int j) {
    const int r = s.gpus(j), n = static_cast<int>(s.placement(j).size());
    const int g = std::max(r + 1, pb_.min_gpus(j));
    if (g > pb_.max_gpus(j)) return 0.0;
    const int nodes = std::max(n, (g + pb_.max_capacity() - 1) / std::max(pb_.max_capacity(), 1));
    ++evals_;
    return (pb_.term(j, std::min(nodes, g), g, true, type_at(s, j)) - s.term(j)) / double(g - r);
  }
  double marginal_loss(const ClusterState& s, int j) {
    const int r = s.gpus(j), n = static_cast<int>(s.placement(j).size());
    ++evals_;
    if (r - 1 < pb_.min_gpus(j)) return (s.term(j) - pb_.term(j, 0, 0, true)) / double(r);
    return s.term(j) - pb_.term(j, std::min(n, r - 1), r - 1, true, type_at(s, j));
  }

  bool transfer_pass(ClusterState& s, const std::vector<int>& jobs) {
    constexpr std::size_t kSide = 16, kTries = 48, kPairs = 16;
    std::size_t pairs_tried = 0;
    std::vector<std::pair<double, int>> gain, loss;
    for (int j : jobs) {
      gain.push_back({marginal_gain(s, j), j});
      if (s.gpus(j) > 0) loss.push_back({marginal_loss(s, j), j});
    }
    auto top = [](std::vector<std::pair<double, int>>& v, std::size_t k, bool largest) {
      k = std::min(k, v.size());
      std::partial_sort(v.begin(), v.begin() + k, v.end(), [largest](const auto& a, const auto& b) {
        return largest ? (a.first != b.first ? a.first > b.first : a.second < b.second)
                       : (a.first != b.first ? a.first < b.first : a.second < b.second);
      });
      v.resize(k);
    };
    top(gain, kSide, true);
    top(loss, kSide, false);
    std::vector<std::tuple<double, int, int>> pairs;
    for (const auto& [g, to] : gain)
      for (const auto& [l, from] : loss)
        if (to != from) pairs.push_back({g - l, to, from});
    std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
      return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b) : a < b;
    });
    bool improved = false;
    std::size_t tries = 0;
    for (const auto& [score, to, from] : pairs) {
      if (tries++ >= kTries || !budget_left()) break;
      if (s.gpus(from) == 0) continue;
      const int node = transfer_node(s, to, from);
      s.commit();
      if (score > 0 && (transfer(s, to, from, node, false) || transfer(s, to, from, node, true) ||
                        force_place(s, to, grown(s, to, node)))) {
        improved = true;
        continue;
      }
      improved |= pairs_tried++ < kPairs && pair_reoptimize(s, to, from);
    }
    return improved;
  }

  // Where `from` should give: a node `to` uses, else one of `to`'s current
  // nodes, else `from`'s smallest share.
  int transfer_node(const ClusterState& s, int to, int from) const {
    for (const NodeShare& x : s.placement(to))
      if (s.own(from, x.node) > 0) return x.node;
    for (const NodeShare& x : pb_.current(to))
      if (s.own(from, x.node) > 0) return x.node;
    const Placement& p = s.placement(from);
    return std::min_element(p.begin(), p.end(), [](const NodeShare& a, const NodeShare& b) { return a.gpus < b.gpus; })->node;
  }

  bool replacement_pass(ClusterState& s, const std::vector<int>& jobs) {
    bool improved = false;
    for (int j : jobs) {
      if (!budget_left()) break;
      s.commit();
      const Placement& cur = pb_.current(j);
      if (!cur.empty() && !(s.placement(j) == cur) && eval(j, cur) > s.term(j) + tolerance(s.term(j)))
        improved |= force_place(s, j, cur);
      const Placement p = s.placement(j);
      if (p.size() > 1 && pb_.term(j, 1, s.gpus(j), true, type_at(s, j)) > s.term(j) + tolerance(s.term(j))) {
        ++evals_;
        const NodeShare big = *std::max_element(p.begin(), p.end(), [](const NodeShare& a, const NodeShare& b) {
          return a.gpus != b.gpus ? a.gpus < b.gpus : a.node > b.node;
        });
        if (pb_.capacity(big.node) >= s.gpus(j)) improved |= force_place(s, j, Placement{{big.node, s.gpus(j)}});
      }
    }
    return improved;
  }

  void descent(ClusterState& s, std::vector<int> jobs) {
    while (budget_left()) {
      bool improved = false;
      std::shuffle(jobs.begin(), jobs.end(), rng_);
      for (int j : jobs) {
        if (!budget_left()) break;
        s.commit();
        improved |= best_response(s, j);
      }
      if (budget_left()) improved |= transfer_pass(s, jobs);
      if (budget_left()) improved |= replacement_pass(s, jobs);
      s.commit();
      if (!improved) break;
    }
  }

  void ruin_and_recreate(ClusterState& s) {
    constexpr std::size_t kRuin = 8;
    constexpr long long kMaxPerturbation = 1000000;
    const int jobs = pb_.num_jobs();
    const long long patience = std::max<long long>(256, 1LL * jobs);
    const long long stop = evals_ + kMaxPerturbation;
    long long failures = 0;
    std::vector<int> ruin;
    std::vector<double> weight(jobs, 1.0);
    std::uniform_real_distribution<double> noise(0.5, 1.5);
    std::bernoulli_distribution coin(0.5);
    while (budget_left() && failures < patience && evals_ < stop) {
      const int j = std::uniform_int_distribution<int>(0, jobs - 1)(rng_);
      ruin.assign(1, j);
      auto add_node = [&](int node) {
        for (int k : s.occupants(node))
          if (std::find(ruin.begin(), ruin.end(), k) == ruin.end()) ruin.push_back(k);
      };
      if (coin(rng_)) {
        // The job and its node neighbours (now and in its current placement).
        for (const NodeShare& x : s.placement(j)) add_node(x.node);
        for (const NodeShare& x : pb_.current(j)) add_node(x.node);
      } else {
        // The job and a few others anywhere: GPUs can change hands at a
        // distance when jobs span nodes.
        for (int k = 0; k < 3; ++k) {
          const int other = std::uniform_int_distribution<int>(0, jobs - 1)(rng_);
          if (std::find(ruin.begin(), ruin.end(), other) == ruin.end()) ruin.push_back(other);
        }
      }
      if (ruin.size() == 1 && pb_.num_nodes() > 0)
        add_node(std::uniform_int_distribution<int>(0, pb_.num_nodes() - 1)(rng_));
      if (ruin.size() > kRuin) {
        std::shuffle(ruin.begin() + 1, ruin.end(), rng_);
        ruin.resize(kRuin);
      }
      s.commit();
      const std::size_t mark = s.mark();
      for (int k : ruin) {
        s.assign(k, Placement{});
        weight[k] = noise(rng_);
      }
      s.set_tie_breaker(&rng_);
      greedy_fill(s, ruin, &weight);
      s.set_tie_breaker(nullptr);
      for (int k : ruin) best_response(s, k);
      feed_hungry(s);
      if (keep_if_better(s, mark)) {
        failures = 0;
        descent(s, ruin);
      } else {
        ++failures;
      }
    }
    s.commit();
  }

  const PolluxProblem& pb_;
  const long long budget_;
  Rng& rng_;
  const int step_;  // K: the largest growth step, one node's worth of GPUs
  const double unit_;  // absolute part of tolerance()
  long long evals_ = 0;
  Placement scratch_;
  std::vector<int> sizes_, hungry_;
  std::vector<long> stamps_;
};

}  // namespace

SearchResult local_search(const PolluxProblem& pb, long long budget, Rng& rng) {
  return LocalSearch(pb, budget, rng).run();
}

}  // namespace pollux::detail

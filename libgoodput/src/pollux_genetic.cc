// The artifact's genetic search (NSGA-II), with sparse rows.
//
// An individual is the artifact's job x node matrix of replica counts,
// stored row by row as (node, GPUs) cells (compressed sparse rows), so that
// a 512-node, 1000-job round costs memory in proportion to the replicas,
// not to the matrix. Every operator has the artifact's distribution:
//  - mutation: each row is reset to the current allocation with
//    probability 0.1; each row, with probability 0.1, has each of its
//    entries zeroed with probability 0.1; then, with the node's free GPUs
//    computed once, every (job, node) entry on a node with a free GPU is
//    raised to a uniform value in [entry, node capacity] with probability
//    q1 + q2 - q1 q2, q1 = 1 / #nodes with a free GPU, q2 = 1 / #such nodes
//    the job already uses (0 if none); sampled by geometric skips;
//  - crossover: single point over jobs (probability 0.9, else copies);
//  - repair, in job priority order: a node keeps only the first distributed
//    job that uses it (interference avoidance); each row is trimmed to
//    max_replicas and max_nodes_per_job in a random node order; node
//    capacity is granted in job order; uniform_gpus_per_node (not in the
//    artifact) lowers a multi-node row to its smallest entry; rows below
//    min_replicas or min_nodes are cleared.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "pollux_search.h"

namespace pollux::detail {
namespace {

using Rng = std::mt19937_64;

double unit(Rng& rng) { return std::generate_canonical<double, 53>(rng); }
int uniform_int(Rng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

struct Genome {
  std::vector<int> start;        // num_jobs + 1 offsets into cells
  std::vector<NodeShare> cells;  // each row sorted by node, no zeros
  double f1 = 0, f2 = 0;         // minimised: -fitness, -utility
  int rank = 0;
  double crowding = 0;
  std::size_t hash = 0;

  int rows() const { return static_cast<int>(start.size()) - 1; }
  const NodeShare* begin(int j) const { return cells.data() + start[j]; }
  const NodeShare* end(int j) const { return cells.data() + start[j + 1]; }
  int size(int j) const { return start[j + 1] - start[j]; }
  bool same_cells(const Genome& o) const { return start == o.start && cells == o.cells; }
};

// Appends rows to a genome under construction.
struct GenomeBuilder {
  Genome g;
  explicit GenomeBuilder(std::size_t reserve) {
    g.start.push_back(0);
    g.cells.reserve(reserve);
  }
  void add_row(const NodeShare* b, const NodeShare* e) {
    for (; b != e; ++b)
      if (b->gpus > 0) g.cells.push_back(*b);
    g.start.push_back(static_cast<int>(g.cells.size()));
  }
  void add_row(const std::vector<NodeShare>& row) { add_row(row.data(), row.data() + row.size()); }
  Genome done() { return std::move(g); }
};

std::size_t hash_of(const Genome& g) {
  std::size_t h = 1469598103934665603ull;
  auto mix = [&h](std::size_t v) { h = (h ^ v) * 1099511628211ull; };
  for (int s : g.start) mix(static_cast<std::size_t>(s));
  for (const NodeShare& c : g.cells) mix((static_cast<std::size_t>(c.node) << 20) ^ static_cast<std::size_t>(c.gpus));
  return h;
}

class Ga {
 public:
  Ga(const PolluxProblem& pb, Rng& rng) : pb_(pb), rng_(rng), used_(pb.num_nodes()), claimed_(pb.num_nodes()) {
    GenomeBuilder b(16);
    for (int j = 0; j < pb.num_jobs(); ++j) b.add_row(pb.current(j));
    base_ = b.done();
  }

  void evaluate(Genome& g) {
    double sum = 0;
    std::vector<Placement>& alloc = scratch_alloc_;
    alloc.resize(pb_.num_jobs());
    for (int j = 0; j < pb_.num_jobs(); ++j) {
      alloc[j].assign(g.begin(j), g.end(j));
      sum += pb_.term(j, alloc[j]);
    }
    g.f1 = -pb_.fitness_from_sum(sum);
    g.f2 = -pb_.utility(alloc);
    ++evaluations_;
  }

  Genome repair(const Genome& in) {
    const int jobs = in.rows();
    const PolicyOptions& opt = pb_.options();
    // Interference: the first distributed job on a node keeps it.
    std::fill(claimed_.begin(), claimed_.end(), 0);
    std::vector<NodeShare> row;
    GenomeBuilder pass1(in.cells.size());
    for (int j = 0; j < jobs; ++j) {
      row.assign(in.begin(j), in.end(j));
      if (opt.interference_avoidance && row.size() > 1)
        for (NodeShare& c : row) {
          if (claimed_[c.node]) c.gpus = 0;
          claimed_[c.node] = 1;
        }
      trim_row(j, row);
      pass1.add_row(row);
    }
    const Genome trimmed = pass1.done();
    // Node capacity in job order, then uniformity and min replicas.
    for (int n = 0; n < pb_.num_nodes(); ++n) used_[n] = pb_.capacity(n);  // here: GPUs left
    GenomeBuilder out(trimmed.cells.size());
    for (int j = 0; j < jobs; ++j) {
      row.assign(trimmed.begin(j), trimmed.end(j));
      for (NodeShare& c : row) {
        if (!pb_.allowed(j, c.node)) c.gpus = 0;
        c.gpus = std::min(c.gpus, used_[c.node]);
        used_[c.node] -= c.gpus;
      }
      row.erase(std::remove_if(row.begin(), row.end(), [](const NodeShare& c) { return c.gpus <= 0; }), row.end());
      if (opt.uniform_gpus_per_node && row.size() > 1) {
        int low = row.front().gpus;
        for (const NodeShare& c : row) low = std::min(low, c.gpus);
        for (NodeShare& c : row) {
          used_[c.node] += c.gpus - low;
          c.gpus = low;
        }
      }
      const int total = placement_gpus(row);
      if (total > 0 && (total < pb_.min_gpus(j) || total > pb_.max_gpus(j) ||
                        static_cast<int>(row.size()) < pb_.min_nodes(j))) {
        for (const NodeShare& c : row) used_[c.node] += c.gpus;
        row.clear();
      }
      out.add_row(row);
    }
    return out.done();
  }

  Genome mutate(const Genome& in) {
    const int jobs = in.rows();
    // (1) reset rows to the current allocation, (2) zero some entries.
    GenomeBuilder pass1(in.cells.size() + 16);
    std::vector<NodeShare> row;
    for (int j = 0; j < jobs; ++j) {
      if (unit(rng_) < 0.1)
        row.assign(base_.begin(j), base_.end(j));
      else
        row.assign(in.begin(j), in.end(j));
      if (unit(rng_) < 0.1)
        for (NodeShare& c : row)
          if (unit(rng_) < 0.1) c.gpus = 0;
      pass1.add_row(row);
    }
    const Genome mid = pass1.done();
    // (3) raise entries on nodes with a free GPU.
    for (int n = 0; n < pb_.num_nodes(); ++n) used_[n] = 0;
    for (const NodeShare& c : mid.cells) used_[c.node] += c.gpus;
    free_nodes_.clear();
    for (int n = 0; n < pb_.num_nodes(); ++n)
      if (pb_.capacity(n) - used_[n] >= 1) free_nodes_.push_back(n);
    const double q1 = free_nodes_.empty() ? 0.0 : 1.0 / double(free_nodes_.size());
    GenomeBuilder out(mid.cells.size() + jobs);
    for (int j = 0; j < jobs; ++j) {
      row.assign(mid.begin(j), mid.end(j));
      int own_free = 0;
      for (const NodeShare& c : row) own_free += is_free(c.node);
      const double q2 = own_free > 0 ? 1.0 / own_free : 0.0;
      for (NodeShare& c : row)
        if (is_free(c.node) && unit(rng_) < q1 + q2 - q1 * q2) c.gpus = uniform_int(rng_, c.gpus, pb_.capacity(c.node));
      const std::size_t own = row.size();
      // Free nodes the row does not use, each with probability q1.
      if (q1 > 0) {
        const double log_miss = q1 < 1.0 ? std::log1p(-q1) : 0.0;
        long idx = -1;
        const long count = static_cast<long>(free_nodes_.size());
        while (true) {
          if (q1 >= 1.0) {
            ++idx;
          } else {
            const double u = 1.0 - unit(rng_);  // (0, 1]
            const double skip = std::floor(std::log(u) / log_miss);
            if (!(skip < double(count))) break;
            idx += 1 + static_cast<long>(skip);
          }
          if (idx >= count) break;
          const int node = free_nodes_[idx];
          const bool in_row = std::binary_search(row.begin(), row.begin() + own, NodeShare{node, 0},
                                                 [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; });
          if (in_row) continue;  // handled above with q1 + q2
          const int g = uniform_int(rng_, 0, pb_.capacity(node));
          if (g > 0) row.push_back({node, g});
        }
      }
      if (row.size() != own) std::sort(row.begin(), row.end(), [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; });
      out.add_row(row);
    }
    return out.done();
  }

  void crossover(const Genome& a, const Genome& b, Genome& c1, Genome& c2) {
    if (unit(rng_) >= 0.9) {
      c1 = a;
      c2 = b;
      return;
    }
    const int jobs = a.rows();
    const int point = uniform_int(rng_, 0, jobs - 1);
    GenomeBuilder x(a.cells.size()), y(b.cells.size());
    for (int j = 0; j < jobs; ++j) {
      const bool swap = j < point;
      const Genome& from_x = swap ? b : a;
      const Genome& from_y = swap ? a : b;
      x.add_row(from_x.begin(j), from_x.end(j));
      y.add_row(from_y.begin(j), from_y.end(j));
    }
    c1 = x.done();
    c2 = y.done();
  }

  long long evaluations() const { return evaluations_; }

 private:
  bool is_free(int node) const { return pb_.capacity(node) - used_[node] >= 1; }

  // max_replicas, then max_nodes_per_job, entries visited in one random order.
  void trim_row(int j, std::vector<NodeShare>& row) {
    int total = 0, count = 0;
    for (const NodeShare& c : row)
      if (c.gpus > 0) {
        total += c.gpus;
        ++count;
      }
    const int cap_gpus = pb_.max_gpus(j);
    const int cap_nodes = pb_.max_nodes(j);  // the options' limit, or the job's own
    if (total <= cap_gpus && count <= cap_nodes) return;
    perm_.resize(row.size());
    std::iota(perm_.begin(), perm_.end(), 0);
    std::shuffle(perm_.begin(), perm_.end(), rng_);
    int sum = 0;
    for (int k : perm_) {
      NodeShare& c = row[k];
      c.gpus = std::min(c.gpus, std::max(cap_gpus - sum, 0));
      sum += c.gpus;
    }
    int kept = 0;
    for (int k : perm_)
      if (row[k].gpus > 0 && ++kept > cap_nodes) row[k].gpus = 0;
  }

  const PolluxProblem& pb_;
  Rng& rng_;
  Genome base_;
  std::vector<int> used_, free_nodes_, perm_;
  std::vector<char> claimed_;
  std::vector<Placement> scratch_alloc_;
  long long evaluations_ = 0;
};

bool dominates(const Genome& a, const Genome& b) {
  return a.f1 <= b.f1 && a.f2 <= b.f2 && (a.f1 < b.f1 || a.f2 < b.f2);
}

// Fast non-dominated sort: fronts of indices into pop.
std::vector<std::vector<int>> fronts_of(const std::vector<Genome>& pop) {
  const int n = static_cast<int>(pop.size());
  std::vector<std::vector<int>> dominated(n);
  std::vector<int> count(n, 0);
  std::vector<std::vector<int>> fronts(1);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      if (dominates(pop[a], pop[b])) dominated[a].push_back(b);
      else if (dominates(pop[b], pop[a])) ++count[a];
    }
    if (count[a] == 0) fronts[0].push_back(a);
  }
  for (std::size_t f = 0; !fronts[f].empty(); ++f) {
    std::vector<int> next;
    for (int a : fronts[f])
      for (int b : dominated[a])
        if (--count[b] == 0) next.push_back(b);
    fronts.push_back(std::move(next));
  }
  fronts.pop_back();
  return fronts;
}

// pymoo's crowding distance: duplicates (equal objectives) get 0,
// boundary points a large value, others the mean normalised gap.
void set_crowding(std::vector<Genome>& pop, const std::vector<int>& front) {
  constexpr double kBoundary = 1e14;
  if (front.size() <= 2) {
    for (int i : front) pop[i].crowding = kBoundary;
    return;
  }
  std::vector<int> unique;
  for (int i : front) {
    bool dup = false;
    for (int u : unique) dup = dup || (pop[u].f1 == pop[i].f1 && pop[u].f2 == pop[i].f2);
    if (dup) pop[i].crowding = 0;
    else unique.push_back(i);
  }
  for (int i : unique) pop[i].crowding = 0;
  for (int obj = 0; obj < 2; ++obj) {
    auto val = [&](int i) { return obj == 0 ? pop[i].f1 : pop[i].f2; };
    std::vector<int> s = unique;
    std::stable_sort(s.begin(), s.end(), [&](int a, int b) { return val(a) < val(b); });
    const double range = val(s.back()) - val(s.front());
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (k == 0 || k + 1 == s.size()) {
        pop[s[k]].crowding = kBoundary;
      } else if (range > 0 && pop[s[k]].crowding < kBoundary) {
        pop[s[k]].crowding += (val(s[k + 1]) - val(s[k - 1])) / range / 2.0;
      }
    }
  }
}

// Rank-and-crowding survival: the best `keep` of pop, ranks and crowding set.
std::vector<Genome> survive(std::vector<Genome> pop, std::size_t keep, Rng& rng) {
  std::vector<Genome> out;
  const std::vector<std::vector<int>> fronts = fronts_of(pop);
  for (std::size_t f = 0; f < fronts.size() && out.size() < keep; ++f) {
    for (int i : fronts[f]) pop[i].rank = static_cast<int>(f);
    set_crowding(pop, fronts[f]);
    std::vector<int> take = fronts[f];
    if (out.size() + take.size() > keep) {
      std::shuffle(take.begin(), take.end(), rng);  // random order among equal crowding
      std::stable_sort(take.begin(), take.end(), [&](int a, int b) { return pop[a].crowding > pop[b].crowding; });
      take.resize(keep - out.size());
    }
    for (int i : take) out.push_back(std::move(pop[i]));
  }
  return out;
}

bool contains(const std::vector<Genome>& pop, const Genome& g) {
  for (const Genome& o : pop)
    if (o.hash == g.hash && o.same_cells(g)) return true;
  return false;
}

// Binary tournament: dominance, then crowding, then a coin.
int tournament(const std::vector<Genome>& pop, int a, int b, Rng& rng) {
  if (dominates(pop[a], pop[b])) return a;
  if (dominates(pop[b], pop[a])) return b;
  if (pop[a].crowding > pop[b].crowding) return a;
  if (pop[b].crowding > pop[a].crowding) return b;
  return unit(rng) < 0.5 ? a : b;
}

}  // namespace

SearchResult GeneticSearch::run(const PolluxProblem& pb, Rng& rng) {
  SearchResult result;
  const int jobs = pb.num_jobs();
  if (jobs == 0) {
    seeds_.clear();
    return result;
  }
  Ga ga(pb, rng);
  const std::size_t pop_size = static_cast<std::size_t>(pb.options().population);

  // Seeds: the previous front by job id, else the current allocation.
  std::vector<std::vector<Placement>> seed_rows;
  if (seeds_.empty()) {
    std::vector<Placement> rows(jobs);
    for (int j = 0; j < jobs; ++j) rows[j] = pb.current(j);
    seed_rows.push_back(std::move(rows));
  }
  for (const auto& seed : seeds_) {
    std::vector<Placement> rows(jobs);
    for (int j = 0; j < jobs; ++j) {
      const auto it = seed.find(pb.id(j));
      if (it == seed.end()) continue;
      for (const NodeShare& c : it->second)
        if (c.node < pb.num_nodes()) rows[j].push_back(c);
    }
    seed_rows.push_back(std::move(rows));
  }
  std::vector<Genome> pop;
  for (const auto& rows : seed_rows) {
    GenomeBuilder b(16);
    for (const Placement& r : rows) b.add_row(r);
    Genome g = ga.repair(b.done());
    g.hash = hash_of(g);
    if (contains(pop, g)) continue;
    ga.evaluate(g);
    pop.push_back(std::move(g));
  }
  // The size first: the order in which arguments are evaluated is
  // unspecified, and clang moves `pop` out before taking its size (an
  // empty population, then an endless loop below).
  const std::size_t seeded = pop.size();
  pop = survive(std::move(pop), seeded, rng);

  for (int gen = 0; gen < pb.options().generations; ++gen) {
    std::vector<Genome> children;
    for (int attempt = 0; attempt < 100 && children.size() < pop_size; ++attempt) {
      const std::size_t need = pop_size - children.size();
      const std::size_t matings = (need + 1) / 2;
      // Tournament pairs from concatenated random permutations.
      std::vector<int> pool;
      while (pool.size() < matings * 4) {
        std::vector<int> perm(pop.size());
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        pool.insert(pool.end(), perm.begin(), perm.end());
      }
      for (std::size_t m = 0; m < matings && children.size() < pop_size; ++m) {
        const int p1 = tournament(pop, pool[4 * m], pool[4 * m + 1], rng);
        const int p2 = tournament(pop, pool[4 * m + 2], pool[4 * m + 3], rng);
        Genome c1, c2;
        ga.crossover(pop[p1], pop[p2], c1, c2);
        for (Genome* c : {&c1, &c2}) {
          if (children.size() >= pop_size) break;
          Genome child = ga.repair(ga.mutate(*c));
          child.hash = hash_of(child);
          if (contains(pop, child) || contains(children, child)) continue;
          ga.evaluate(child);
          children.push_back(std::move(child));
        }
      }
    }
    for (Genome& c : children) pop.push_back(std::move(c));
    pop = survive(std::move(pop), pop_size, rng);
  }

  // Best fitness on the final front; the front seeds the next round.
  const Genome* best = nullptr;
  seeds_.clear();
  for (const Genome& g : pop) {
    if (g.rank != 0) continue;
    if (best == nullptr || g.f1 < best->f1) best = &g;
    std::unordered_map<std::uint64_t, Placement> seed;
    for (int j = 0; j < jobs; ++j)
      if (g.size(j) > 0) seed.emplace(pb.id(j), Placement(g.begin(j), g.end(j)));
    seeds_.push_back(std::move(seed));
  }
  result.alloc.resize(jobs);
  for (int j = 0; j < jobs; ++j) result.alloc[j].assign(best->begin(j), best->end(j));
  result.evaluations = ga.evaluations();
  return result;
}

}  // namespace pollux::detail

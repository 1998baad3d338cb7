// Sparse allocation state for the Pollux local search (see pollux_state.h).
#include "pollux_state.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace pollux::detail {
namespace {

bool has_node(const Placement& p, int node) {
  for (const NodeShare& s : p)
    if (s.node == node) return true;
  return false;
}

}  // namespace

void ClusterState::Buckets::init(int nodes, int max_free) {
  by_free.assign(max_free + 1, {});
  pos.assign(nodes, -1);
  at.assign(nodes, -1);
}

void ClusterState::Buckets::put(int node, int f) {
  by_free[f].push_back(node);
  pos[node] = static_cast<int>(by_free[f].size()) - 1;
  at[node] = f;
}

void ClusterState::Buckets::drop(int node) {
  const int f = at[node];
  if (f < 0) return;
  std::vector<int>& b = by_free[f];
  const int last = b.back();
  b[pos[node]] = last;
  pos[last] = pos[node];
  b.pop_back();
  at[node] = pos[node] = -1;
}

ClusterState::ClusterState(const PolluxProblem& pb)
    : pb_(pb),
      interference_(pb.options().interference_avoidance),
      place_(pb.num_jobs()),
      gpus_(pb.num_jobs(), 0),
      idle_((static_cast<std::size_t>(pb.num_jobs()) + 63) / 64, 0),
      term_(pb.num_jobs()),
      used_(pb.num_nodes(), 0),
      owner_(pb.num_nodes(), -1),
      occupants_(pb.num_nodes()) {
  for (int j = 0; j < pb.num_jobs(); ++j) {
    idle_[static_cast<std::size_t>(j) / 64] |= std::uint64_t{1} << (j % 64);
    term_[j] = pb.term(j, Placement{});
    sum_ += term_[j];
  }
  all_.resize(static_cast<std::size_t>(pb.num_types()));
  open_.resize(static_cast<std::size_t>(pb.num_types()));
  for (int t = 0; t < pb.num_types(); ++t) {
    all_[t].init(pb.num_nodes(), pb.max_capacity());
    open_[t].init(pb.num_nodes(), pb.max_capacity());
  }
  type_free_.assign(static_cast<std::size_t>(pb.num_types()), 0);
  for (int n = 0; n < pb.num_nodes(); ++n) {
    type_free_[static_cast<std::size_t>(pb.type(n))] += pb.capacity(n);
    all_of(n).put(n, pb.capacity(n));
    open_of(n).put(n, pb.capacity(n));
  }
}

int ClusterState::next_idle(int from) const noexcept {
  if (from < 0) from = 0;
  std::size_t w = static_cast<std::size_t>(from) / 64;
  if (w >= idle_.size()) return -1;
  std::uint64_t bits = idle_[w] & (~std::uint64_t{0} << (from % 64));
  while (bits == 0) {
    if (++w == idle_.size()) return -1;
    bits = idle_[w];
  }
  return static_cast<int>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
}

int ClusterState::own(int j, int node) const noexcept {
  for (const NodeShare& s : place_[j])
    if (s.node == node) return s.gpus;
  return 0;
}

bool ClusterState::allowed_multi(int j, int node) const noexcept {
  return !interference_ || owner_[node] < 0 || owner_[node] == j;
}

bool ClusterState::fits(int j, const Placement& p) const {
  const int total = placement_gpus(p);
  if (total == 0) return true;
  if (total < pb_.min_gpus(j) || total > pb_.max_gpus(j) || static_cast<int>(p.size()) > pb_.max_nodes(j) ||
      static_cast<int>(p.size()) < pb_.min_nodes(j))
    return false;
  const bool multi = p.size() > 1;
  if (multi && pb_.type_of(p) < 0) return false;
  const bool uniform = pb_.options().uniform_gpus_per_node;
  for (const NodeShare& s : p) {
    if (s.node < 0 || s.node >= pb_.num_nodes() || s.gpus <= 0 || !pb_.allowed(j, s.node)) return false;
    if (s.gpus > free(s.node) + own(j, s.node)) return false;
    if (multi && (!allowed_multi(j, s.node) || (uniform && s.gpus != p.front().gpus))) return false;
  }
  return true;
}

int ClusterState::pick(const std::vector<int>& b, int j, const Placement& skip, int avoid) const {
  const std::size_t n = b.size();
  if (n == 0) return -1;
  const std::size_t first = ties_ != nullptr ? std::uniform_int_distribution<std::size_t>(0, n - 1)(*ties_) : 0;
  for (std::size_t k = 0; k < n; ++k) {
    const int node = b[(first + k) % n];
    if (node != avoid && own(j, node) == 0 && !has_node(skip, node) && usable(j, node)) return node;
  }
  return -1;
}

int ClusterState::best_fit(int j, int need, bool multi, const Placement& skip, int avoid) const {
  int best = -1, best_avail = INT_MAX;
  for (const NodeShare& s : place_[j]) {
    if (s.node == avoid || has_node(skip, s.node) || (multi && !allowed_multi(j, s.node)) ||
        !usable(j, s.node))
      continue;
    const int a = avail(j, s.node);
    if (a >= need && a < best_avail) {
      best = s.node;
      best_avail = a;
    }
  }
  const Buckets& b = multi ? open_[bucket_type()] : all_[bucket_type()];
  const int top = std::min(best_avail - 1, pb_.max_capacity());
  for (int f = std::max(need, 1); f <= top; ++f) {
    const int node = pick(b.by_free[f], j, skip, avoid);
    if (node >= 0) return node;
  }
  return best;
}

int ClusterState::largest(int j, const Placement& skip, int avoid) const {
  int best = -1, best_avail = 0;
  for (const NodeShare& s : place_[j]) {
    if (s.node == avoid || has_node(skip, s.node) || !allowed_multi(j, s.node) || !usable(j, s.node)) continue;
    const int a = avail(j, s.node);
    if (a > best_avail) {
      best = s.node;
      best_avail = a;
    }
  }
  for (int f = pb_.max_capacity(); f > best_avail; --f) {
    const int node = pick(open_[bucket_type()].by_free[f], j, skip, avoid);
    if (node >= 0) return node;
  }
  return best;
}

bool ClusterState::type_has_room(int j, int t, int gpus) const noexcept {
  long room = type_free_[static_cast<std::size_t>(t)];
  for (const NodeShare& s : place_[j])
    if (pb_.type(s.node) == t) room += s.gpus;
  return room >= gpus;
}

template <typename Pack>
bool ClusterState::best_over_types(int j, int gpus, Placement& out, Pack pack) const {
  bool found = false;
  double best = 0;
  for (int t = 0; t < pb_.num_types(); ++t) {
    if (!pb_.type_ok(j, t) || !type_has_room(j, t, gpus)) continue;
    type_filter_ = t;
    const bool ok = pack(type_scratch_);
    type_filter_ = -1;
    if (!ok) continue;
    const double term = pb_.term(j, type_scratch_);
    if (!found || term > best) {
      found = true;
      best = term;
      out = type_scratch_;
    }
  }
  if (!found) out.clear();
  return found;
}

bool ClusterState::pack(int j, int gpus, Placement& out, int avoid) const {
  if (pb_.num_types() == 1 || gpus == 0) return pack_in(j, gpus, out, avoid);
  return best_over_types(j, gpus, out, [&](Placement& p) { return pack_in(j, gpus, p, avoid); });
}

bool ClusterState::pack_even(int j, int gpus, int nodes, Placement& out, int avoid) const {
  if (pb_.num_types() == 1) return pack_even_in(j, gpus, nodes, out, avoid);
  return best_over_types(j, gpus, out, [&](Placement& p) { return pack_even_in(j, gpus, nodes, p, avoid); });
}

bool ClusterState::pack_in(int j, int gpus, Placement& out, int avoid) const {
  out.clear();
  if (gpus == 0) return true;
  if (gpus < pb_.min_gpus(j) || gpus > pb_.max_gpus(j)) return false;
  const int one = pb_.min_nodes(j) > 1 ? -1 : best_fit(j, gpus, false, out, avoid);
  if (one >= 0) {
    out.push_back({one, gpus});
    return true;
  }
  const int max_nodes = pb_.max_nodes(j);
  if (pb_.options().uniform_gpus_per_node) {
    for (int k = std::max(2, pb_.min_nodes(j)); k <= max_nodes; ++k)
      if (pack_even_in(j, gpus, k, out, avoid)) return true;
    out.clear();
    return false;
  }
  int left = gpus;
  while (left > 0) {
    int node = best_fit(j, left, true, out, avoid);
    if (node >= 0) {
      out.push_back({node, left});
      break;
    }
    node = largest(j, out, avoid);
    if (node < 0 || static_cast<int>(out.size()) + 1 >= max_nodes) {
      out.clear();
      return false;
    }
    const int a = avail(j, node);
    out.push_back({node, a});
    left -= a;
  }
  out = normalize_placement(std::move(out));
  if (static_cast<int>(out.size()) < pb_.min_nodes(j)) {
    out.clear();
    return false;
  }
  return true;
}

bool ClusterState::pack_even_in(int j, int gpus, int nodes, Placement& out, int avoid) const {
  out.clear();
  if (nodes < 2 || nodes > pb_.max_nodes(j) || nodes < pb_.min_nodes(j) || gpus % nodes != 0 || gpus / nodes > pb_.max_capacity() ||
      gpus < pb_.min_gpus(j) || gpus > pb_.max_gpus(j))
    return false;
  while (static_cast<int>(out.size()) < nodes) {
    const int node = best_fit(j, gpus / nodes, true, out, avoid);
    if (node < 0) {
      out.clear();
      return false;
    }
    out.push_back({node, gpus / nodes});
  }
  out = normalize_placement(std::move(out));
  return true;
}

void ClusterState::refresh(int node) {
  const int f = free(node);
  Buckets &all = all_of(node), &open = open_of(node);
  if (all.at[node] != f) {
    all.drop(node);
    all.put(node, f);
  }
  if (owner_[node] >= 0) {
    open.drop(node);
  } else if (open.at[node] != f) {
    open.drop(node);
    open.put(node, f);
  }
}

void ClusterState::set(int j, const Placement& p_in) {
  const Placement p = p_in;  // p_in may alias place_[j]
  const Placement old = std::move(place_[j]);
  for (const NodeShare& s : old) {
    used_[s.node] -= s.gpus;
    type_free_[static_cast<std::size_t>(pb_.type(s.node))] += s.gpus;
    std::vector<int>& occ = occupants_[s.node];
    occ.erase(std::find(occ.begin(), occ.end(), j));
    if (owner_[s.node] == j) owner_[s.node] = -1;
  }
  const bool multi = interference_ && p.size() > 1;
  for (const NodeShare& s : p) {
    used_[s.node] += s.gpus;
    type_free_[static_cast<std::size_t>(pb_.type(s.node))] -= s.gpus;
    occupants_[s.node].push_back(j);
    if (multi) owner_[s.node] = j;
  }
  for (const NodeShare& s : old) refresh(s.node);
  for (const NodeShare& s : p) refresh(s.node);
  place_[j] = p;
  used_total_ += placement_gpus(p) - gpus_[j];
  gpus_[j] = placement_gpus(p);
  const std::uint64_t bit = std::uint64_t{1} << (j % 64);
  if (gpus_[j] == 0) idle_[static_cast<std::size_t>(j) / 64] |= bit;
  else idle_[static_cast<std::size_t>(j) / 64] &= ~bit;
  const double t = pb_.term(j, p);
  // Neumaier summation of the change.
  const double x = t - term_[j];
  const double s = sum_ + x;
  carry_ += std::fabs(sum_) >= std::fabs(x) ? (sum_ - s) + x : (x - s) + sum_;
  sum_ = s;
  term_[j] = t;
}

void ClusterState::assign(int j, const Placement& p) {
  log_.push_back({j, place_[j], term_[j]});
  set(j, p);
}

void ClusterState::rollback(std::size_t mark) {
  while (log_.size() > mark) {
    Undo u = std::move(log_.back());
    log_.pop_back();
    set(u.job, u.old);
  }
}

std::vector<int> ClusterState::touched_since(std::size_t mark) const {
  std::vector<int> jobs;
  for (std::size_t k = mark; k < log_.size(); ++k)
    if (std::find(jobs.begin(), jobs.end(), log_[k].job) == jobs.end()) jobs.push_back(log_[k].job);
  return jobs;
}

double ClusterState::delta_since(std::size_t mark, double* scale) const {
  double delta = 0, magnitude = 0;
  std::vector<int> seen;
  for (std::size_t k = mark; k < log_.size(); ++k) {
    const int j = log_[k].job;
    if (std::find(seen.begin(), seen.end(), j) != seen.end()) continue;
    seen.push_back(j);
    delta += term_[j] - log_[k].old_term;
    magnitude += std::fabs(log_[k].old_term);
  }
  if (scale != nullptr) *scale = magnitude;
  return delta;
}

}  // namespace pollux::detail

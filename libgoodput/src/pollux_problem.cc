// The Pollux problem of one round (see pollux_problem.h).
#include "pollux_problem.h"


#include <algorithm>
#include <cmath>
#include <numeric>

namespace pollux::detail {
namespace {

constexpr double kEpsilon = 1e-3;  // the artifact's floor inside the power mean

// A speedup function's value, or 0 when it is not a finite positive number
// (a broken model must not poison the search).
double sane(double s) { return std::isfinite(s) && s > 0 ? s : 0.0; }

}  // namespace

PolluxProblem::PolluxProblem(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                             const std::vector<Placement>& current, const PolicyOptions& options)
    : options_(options) {
  for (const NodeInfo& n : nodes) {
    capacity_.push_back(n.gpus);
    type_.push_back(std::max(n.type, 0));
    num_types_ = std::max(num_types_, type_.back() + 1);
    max_capacity_ = std::max(max_capacity_, n.gpus);
    total_gpus_ += n.gpus;
  }
  std::vector<int> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const JobInfo &x = jobs[a], &y = jobs[b];
    if (x.attained_service != y.attained_service) return x.attained_service < y.attained_service;
    if (x.submit_time != y.submit_time) return x.submit_time < y.submit_time;
    return x.id < y.id;
  });

  // Fair share (artifact): ceil(1 / share / #jobs) replicas on
  // ceil(#nodes * share) nodes, share = one GPU of the cluster.
  const long fair_gpus = jobs.empty() ? 1 : std::max<long>(1, (total_gpus_ + long(jobs.size()) - 1) / long(jobs.size()));
  const long fair_nodes = total_gpus_ > 0 ? std::min(fair_gpus, (long(nodes.size()) + total_gpus_ - 1) / total_gpus_) : 1;
  const double share_scale = total_gpus_ > 0 ? double(nodes.size()) / double(total_gpus_) : 0.0;

  jobs_.reserve(jobs.size());
  for (int i : order) {
    const JobInfo& in = jobs[i];
    Job j;
    j.caller = i;
    j.id = in.id;
    j.min_gpus = std::max(in.min_replicas, 1);
    j.max_gpus = static_cast<int>(std::min<long>(in.max_replicas, total_gpus_));
    if (j.max_gpus < j.min_gpus) j.max_gpus = 0;
    j.max_nodes = std::min({options.max_nodes_per_job, num_nodes(), j.max_gpus});
    if (in.max_nodes > 0) j.max_nodes = std::min(j.max_nodes, in.max_nodes);
    // The types it may use: every one when untyped, else those it has a
    // speedup for.
    j.types.resize(num_types_);
    for (int t = 0; t < num_types_; ++t) {
      Job::Type& ty = j.types[t];
      const SpeedupFn* fn = &in.speedup;
      if (!in.speedup_by_type.empty()) {
        fn = t < static_cast<int>(in.speedup_by_type.size()) ? &in.speedup_by_type[t] : nullptr;
        ty.usable = fn != nullptr && static_cast<bool>(*fn);
      }
      ty.fn = fn != nullptr && *fn ? fn : nullptr;
    }
    int usable = 0;
    for (std::size_t n = 0; n < nodes.size(); ++n)
      usable += (in.allowed_nodes.empty() || (n < in.allowed_nodes.size() && in.allowed_nodes[n])) &&
                j.types[type_[n]].usable;
    if (!in.allowed_nodes.empty()) j.allowed.assign(in.allowed_nodes.begin(), in.allowed_nodes.end());
    if (!in.allowed_nodes.empty() || !in.speedup_by_type.empty()) j.max_nodes = std::min(j.max_nodes, usable);
    // At least one GPU on each of its fewest nodes; never runs when it may
    // not span that many.
    j.min_nodes = std::max(in.min_nodes, 1);
    j.min_gpus = std::max(j.min_gpus, j.min_nodes);
    if (j.min_nodes > j.max_nodes || j.max_gpus < j.min_gpus) j.max_gpus = 0;
    j.penalty = restart_factor(in.age, in.restarts, in.restart_delay);  // D as the job description gave it
    j.current = normalize_placement(current[i]);
    // Normalised by the fair-share speedup on its best type.
    for (int t = num_types_ - 1; t >= 0; --t)
      if (j.types[t].usable) j.best_type = t;
    double base = 0.0;
    bool linear = true;
    for (int t = 0; t < num_types_; ++t) {
      Job::Type& ty = j.types[t];
      if (!ty.usable || ty.fn == nullptr) continue;
      linear = false;
      // Fall back to smaller shares when the fair share has no valid
      // configuration (e.g. fair replicas x m_min > M_max).
      double b = 0.0;
      for (long r = fair_gpus; r >= 1 && b <= 0.0; --r)
        b = sane((*ty.fn)(static_cast<int>(std::min(fair_nodes, r)), static_cast<int>(r)));
      if (b > base) {
        base = b;
        j.best_type = t;
      }
      ty.memo.resize(j.max_nodes + 1);
    }
    if (linear) {
      base = 1.0;
      j.linear_base = double(fair_gpus);
    } else if (base <= 0.0) {
      base = 1.0;
    }
    j.scale = share_scale / base;
    jobs_.push_back(std::move(j));
  }
}

int PolluxProblem::type_of(const Placement& p) const noexcept {
  if (p.empty()) return 0;
  const int t = type_[static_cast<std::size_t>(p.front().node)];
  for (const NodeShare& s : p)
    if (type_[static_cast<std::size_t>(s.node)] != t) return -1;
  return t;
}

double PolluxProblem::speedup(int j, int nodes, int gpus, int type) const {
  if (nodes <= 0 || gpus <= 0) return 0.0;
  const Job& job = jobs_[j];
  const Job::Type& ty = job.types[type < 0 ? job.best_type : type];
  if (!ty.usable) return 0.0;
  if (ty.fn == nullptr) return gpus / job.linear_base;
  if (nodes > job.max_nodes || gpus > job.max_gpus) return sane((*ty.fn)(nodes, gpus));
  std::vector<double>& row = ty.memo[nodes];
  if (row.empty()) row.assign(job.max_gpus + 1, -1.0);
  double& slot = row[gpus];
  if (slot < 0) slot = sane((*ty.fn)(nodes, gpus));
  return slot;
}

double PolluxProblem::utility_of(double x) const {
  const double y = x + kEpsilon;
  const double p = options_.fairness_p;
  if (p == -1.0) return -1.0 / y;
  if (p == 0.0) return std::log(y);
  if (p == 1.0) return y;
  return p < 0 ? -std::pow(y, p) : std::pow(y, p);
}

double PolluxProblem::term(int j, int nodes, int gpus, bool changed, int type) const {
  const Job& job = jobs_[j];
  double x = 0.0;
  if (gpus > 0) x = job.scale * speedup(j, nodes, gpus, type) * (changed ? job.penalty : 1.0);
  return utility_of(x);
}

double PolluxProblem::term(int j, const Placement& p) const {
  const int t = type_of(p);
  if (t < 0) return utility_of(0.0);  // over two types: never chosen
  return term(j, static_cast<int>(p.size()), placement_gpus(p), !(p == jobs_[j].current), t);
}

double PolluxProblem::fitness_from_sum(double sum) const {
  if (jobs_.empty()) return 0.0;
  const double mean = sum / double(jobs_.size());
  const double p = options_.fairness_p;
  if (p == 0.0) return std::exp(mean);
  return p < 0 ? std::pow(-mean, 1.0 / p) : std::pow(mean, 1.0 / p);
}

double PolluxProblem::fitness(const std::vector<Placement>& alloc) const {
  double sum = 0.0;
  for (int j = 0; j < num_jobs(); ++j) sum += term(j, alloc[j]);
  return fitness_from_sum(sum);
}

double PolluxProblem::utility(const std::vector<Placement>& alloc) const {
  std::vector<char> active(capacity_.size(), 0);
  double speedups = 0.0;
  for (int j = 0; j < num_jobs(); ++j) {
    for (const NodeShare& s : alloc[j]) active[s.node] = 1;
    const int t = type_of(alloc[j]);
    if (t >= 0) speedups += speedup(j, static_cast<int>(alloc[j].size()), placement_gpus(alloc[j]), t);
  }
  long gpus = 0;
  for (std::size_t n = 0; n < active.size(); ++n) gpus += active[n] ? capacity_[n] : 0;
  return gpus > 0 ? speedups / double(gpus) : 0.0;
}

}  // namespace pollux::detail

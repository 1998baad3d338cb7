// The Sia-like policy (see sia_policy.h).
#include "pollux/sia_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "config.h"
#include "policy_common.h"

#ifdef HAVE_GLPK
#include <glpk.h>
#endif

namespace pollux {
namespace {

// Sia clips the powered values at this (its sia_goodput_clip_val).
constexpr double kClip = 3000.0;

struct Config {
  int type = 0;
  int nodes = 0;  // nodes it spans
  int gpus = 0;
};

struct TypeShape {
  std::vector<int> nodes;  // node indices of this type
  int gpus_per_node = 0;
  int total = 0;
};

std::vector<TypeShape> type_shapes(const std::vector<NodeInfo>& nodes) {
  std::vector<TypeShape> out;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const int t = nodes[n].type;
    if (t < 0) throw std::invalid_argument("sia: a node with a negative GPU type");
    if (static_cast<std::size_t>(t) >= out.size()) out.resize(static_cast<std::size_t>(t) + 1);
    TypeShape& s = out[static_cast<std::size_t>(t)];
    s.nodes.push_back(static_cast<int>(n));
    s.gpus_per_node = std::max(s.gpus_per_node, nodes[n].gpus);
    s.total += nodes[n].gpus;
  }
  return out;
}

// Sia's configuration set: powers of two below the node size on one node,
// then whole nodes.
std::vector<Config> configurations(const std::vector<TypeShape>& types) {
  std::vector<Config> out;
  for (std::size_t t = 0; t < types.size(); ++t) {
    const TypeShape& s = types[t];
    if (s.gpus_per_node <= 0) continue;
    for (int k = 1; k < s.gpus_per_node; k *= 2) out.push_back({static_cast<int>(t), 1, k});
    for (int m = 1; m <= static_cast<int>(s.nodes.size()); ++m)
      out.push_back({static_cast<int>(t), m, m * s.gpus_per_node});
  }
  return out;
}

double speedup_on(const JobInfo& j, int type, int nodes, int gpus) {
  if (!j.speedup_by_type.empty()) {
    if (static_cast<std::size_t>(type) >= j.speedup_by_type.size() || !j.speedup_by_type[static_cast<std::size_t>(type)])
      return 0;
    return j.speedup_by_type[static_cast<std::size_t>(type)](nodes, gpus);
  }
  return j.speedup ? j.speedup(nodes, gpus) : static_cast<double>(gpus);
}

// Sia's re-allocation factor: Pollux's (pollux::restart_factor), but 1
// while the job is younger than one restart.
double sia_restart_factor(const JobInfo& j, double delay) {
  return j.age < delay ? 1.0 : restart_factor(j.age, j.restarts, delay);
}

// Places the chosen configurations of one type on its nodes (see the
// header). `keep[i]`: job i may stay where it is. Returns false when some
// job found no room.
bool pack(const TypeShape& s, const std::vector<NodeInfo>& nodes, const std::vector<int>& jobs,
          const std::vector<Config>& chosen, const std::vector<Placement>& current, const std::vector<char>& keep,
          std::vector<Placement>& out) {
  std::vector<int> free(nodes.size(), 0);
  for (int n : s.nodes) free[static_cast<std::size_t>(n)] = nodes[static_cast<std::size_t>(n)].gpus;
  std::vector<int> todo;
  for (int i : jobs) {
    if (!keep[static_cast<std::size_t>(i)]) {
      todo.push_back(i);
      continue;
    }
    out[static_cast<std::size_t>(i)] = current[static_cast<std::size_t>(i)];
    for (const NodeShare& sh : current[static_cast<std::size_t>(i)]) free[static_cast<std::size_t>(sh.node)] -= sh.gpus;
  }
  std::stable_sort(todo.begin(), todo.end(), [&](int a, int b) {
    return chosen[static_cast<std::size_t>(a)].gpus > chosen[static_cast<std::size_t>(b)].gpus;
  });
  for (int i : todo) {
    const Config& c = chosen[static_cast<std::size_t>(i)];
    Placement p;
    if (c.gpus >= s.gpus_per_node) {  // whole nodes
      for (int n : s.nodes)
        if (static_cast<int>(p.size()) < c.nodes && free[static_cast<std::size_t>(n)] == s.gpus_per_node)
          p.push_back({n, s.gpus_per_node});
      if (static_cast<int>(p.size()) < c.nodes) return false;
    } else {  // the fullest node with room
      int best = -1;
      for (int n : s.nodes)
        if (free[static_cast<std::size_t>(n)] >= c.gpus &&
            (best < 0 || free[static_cast<std::size_t>(n)] < free[static_cast<std::size_t>(best)]))
          best = n;
      if (best < 0) return false;
      p.push_back({best, c.gpus});
    }
    for (const NodeShare& sh : p) free[static_cast<std::size_t>(sh.node)] -= sh.gpus;
    out[static_cast<std::size_t>(i)] = std::move(p);
  }
  return true;
}

#ifdef HAVE_GLPK
// Solves the binary program; returns the chosen column per job (-1: none).
std::vector<int> solve(int jobs, int types, const std::vector<int>& col_job, const std::vector<int>& col_type,
                       const std::vector<int>& col_gpus, const std::vector<double>& col_obj,
                       const std::vector<char>& col_fixed, const std::vector<TypeShape>& shapes, bool minimise) {
  std::vector<int> pick(static_cast<std::size_t>(jobs), -1);
  const int cols = static_cast<int>(col_job.size());
  if (cols == 0) return pick;
  glp_term_out(GLP_OFF);
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, minimise ? GLP_MIN : GLP_MAX);
  glp_add_rows(lp, jobs + types);
  for (int i = 1; i <= jobs; ++i) glp_set_row_bnds(lp, i, GLP_UP, 0.0, 1.0);
  for (int t = 0; t < types; ++t)
    glp_set_row_bnds(lp, jobs + t + 1, GLP_UP, 0.0, static_cast<double>(shapes[static_cast<std::size_t>(t)].total));
  glp_add_cols(lp, cols);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  for (int c = 0; c < cols; ++c) {
    const std::size_t k = static_cast<std::size_t>(c);
    glp_set_col_kind(lp, c + 1, GLP_BV);
    if (col_fixed[k]) glp_set_col_bnds(lp, c + 1, GLP_FX, 1.0, 1.0);
    glp_set_obj_coef(lp, c + 1, col_obj[k]);
    ia.push_back(col_job[k] + 1);
    ja.push_back(c + 1);
    ar.push_back(1.0);
    ia.push_back(jobs + col_type[k] + 1);
    ja.push_back(c + 1);
    ar.push_back(static_cast<double>(col_gpus[k]));
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.mip_gap = 1e-4;
  parm.tm_lim = 2000;  // ms (the header)
  parm.msg_lev = GLP_MSG_OFF;
  const int rc = glp_intopt(lp, &parm);
  const int status = glp_mip_status(lp);
  if ((rc != 0 && rc != GLP_ETMLIM && rc != GLP_EMIPGAP) || (status != GLP_OPT && status != GLP_FEAS)) {
    glp_delete_prob(lp);
    throw std::runtime_error("sia: GLPK found no solution (glp_intopt " + std::to_string(rc) + ", status " +
                             std::to_string(status) + ")");
  }
  for (int c = 0; c < cols; ++c)
    if (glp_mip_col_val(lp, c + 1) > 0.5) pick[static_cast<std::size_t>(col_job[static_cast<std::size_t>(c)])] = c;
  glp_delete_prob(lp);
  return pick;
}
#endif

}  // namespace

bool SiaPolicy::available() noexcept {
#ifdef HAVE_GLPK
  return true;
#else
  return false;
#endif
}

SiaPolicy::SiaPolicy(const PolicyOptions& options) : Policy(options) {
  if (options.fairness_p == 0 || !std::isfinite(options.fairness_p))
    throw std::invalid_argument("sia: the fairness exponent p must be finite and non-zero");
}

std::vector<Placement> SiaPolicy::optimize(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes,
                                           const std::vector<Placement>& current, double /*now*/) {
  if (current.size() != jobs.size()) throw std::invalid_argument("sia: one current placement per job");
  if (!available())
    throw std::runtime_error("libgoodput was built without GLPK (libglpk-dev): the sia policy is not available");
  const std::vector<TypeShape> shapes = type_shapes(nodes);
  const std::vector<Config> configs = configurations(shapes);
  const double p = options_.fairness_p;
  const int n = static_cast<int>(jobs.size());

  // The columns: every valid (job, configuration) pair.
  std::vector<int> col_job, col_type, col_gpus, col_config;
  std::vector<double> col_obj;
  std::vector<char> col_fixed;
  for (int i = 0; i < n; ++i) {
    const JobInfo& j = jobs[static_cast<std::size_t>(i)];
    const Placement& held = current[static_cast<std::size_t>(i)];
    const int held_gpus = placement_gpus(held);
    const int held_type = held.empty() ? -1 : nodes[static_cast<std::size_t>(held.front().node)].type;
    std::vector<std::pair<int, double>> valid;  // config, goodput
    double lowest = HUGE_VAL;
    for (std::size_t c = 0; c < configs.size(); ++c) {
      const Config& cf = configs[c];
      if (cf.gpus < std::max(j.min_replicas, 1) || cf.gpus > j.max_replicas) continue;
      const double g = speedup_on(j, cf.type, cf.nodes, cf.gpus);
      if (!(g > 0) || !std::isfinite(g)) continue;
      valid.emplace_back(static_cast<int>(c), g);
      lowest = std::min(lowest, g);
    }
    const double r = sia_restart_factor(j, j.restart_delay);
    const bool pin = !held.empty() && j.restarting;
    for (const auto& [c, g] : valid) {
      const Config& cf = configs[static_cast<std::size_t>(c)];
      const bool same = cf.type == held_type && cf.gpus == held_gpus && static_cast<int>(held.size()) == cf.nodes;
      if (pin && !same) continue;
      const double a = std::min(kClip, std::round(std::pow(g / lowest * (same ? 1.0 : r), p) * 100.0) / 100.0);
      col_job.push_back(i);
      col_type.push_back(cf.type);
      col_gpus.push_back(cf.gpus);
      col_config.push_back(c);
      col_obj.push_back(a - options_.sia_lambda_n);
      col_fixed.push_back(pin);
    }
  }

  std::vector<Placement> out(jobs.size());
#ifdef HAVE_GLPK
  const std::vector<int> pick =
      solve(n, static_cast<int>(shapes.size()), col_job, col_type, col_gpus, col_obj, col_fixed, shapes, p < 0);
#else
  const std::vector<int> pick(jobs.size(), -1);
#endif
  std::vector<Config> chosen(jobs.size());
  std::vector<char> keep(jobs.size(), 0);
  std::vector<std::vector<int>> by_type(shapes.size());
  for (int i = 0; i < n; ++i) {
    const int col = pick[static_cast<std::size_t>(i)];
    if (col < 0) continue;
    const Config& cf = configs[static_cast<std::size_t>(col_config[static_cast<std::size_t>(col)])];
    chosen[static_cast<std::size_t>(i)] = cf;
    by_type[static_cast<std::size_t>(cf.type)].push_back(i);
    const Placement& held = current[static_cast<std::size_t>(i)];
    keep[static_cast<std::size_t>(i)] = !held.empty() &&
                                        nodes[static_cast<std::size_t>(held.front().node)].type == cf.type &&
                                        placement_gpus(held) == cf.gpus && static_cast<int>(held.size()) == cf.nodes;
  }
  for (std::size_t t = 0; t < shapes.size(); ++t) {
    if (pack(shapes[t], nodes, by_type[t], chosen, current, keep, out)) continue;
    const std::vector<char> none(jobs.size(), 0);
    for (int i : by_type[t]) out[static_cast<std::size_t>(i)].clear();
    if (!pack(shapes[t], nodes, by_type[t], chosen, current, none, out))
      throw std::runtime_error("sia: the chosen configurations of GPU type " + std::to_string(t) + " do not pack");
  }
  return out;
}

namespace detail {
std::unique_ptr<Policy> make_sia_policy(const PolicyOptions& options) { return std::make_unique<SiaPolicy>(options); }
}  // namespace detail

}  // namespace pollux

// Fit of the throughput model from profiled samples (see pollux/throughput.h).
//
// The objective is the reference's: RMSE of log grad time + RMSE of log
// step time + two small regularisers. It is minimised by NLopt's bounded
// L-BFGS with the analytic gradient below. Parameters the samples cannot
// identify are fixed by the reference's priors (lower bound == upper bound,
// which NLopt treats as a fixed coordinate).
#include <nlopt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pollux/throughput.h"
#include "throughput_terms.h"

namespace pollux {
namespace {

constexpr int kN = PerfParams::kCount;
enum Index { kAlphaC, kBetaC, kAlphaN, kBetaN, kAlphaR, kBetaR, kGamma, kAlpha1 };

// Keeps sqrt differentiable when a noise-free fit reaches zero error; it
// moves each RMSE by at most sqrt(1e-12) = 1e-6, so the objective (the sum
// of the two RMSEs) by at most 2e-6.
constexpr double kSqrtGuard = 1e-12;

struct Problem {
  const std::vector<ProfileSample>* samples;
  bool sharded = false;
  std::vector<double> log_grad;  // log of measured grad times
  std::vector<double> log_step;  // log of measured step times
  int evaluations = 0;
};

double objective(unsigned n, const double* x, double* grad, void* data) {
  auto& pb = *static_cast<Problem*>(data);
  const auto& samples = *pb.samples;
  const double ac = x[kAlphaC], bc = x[kBetaC], g = x[kGamma];
  std::array<double, kN> g1{}, g2{};
  double s1 = 0, s2 = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const ProfileSample& s = samples[i];
    const double pa = ac + bc * s.atomic_batch;
    const detail::SyncTerms t = detail::sync_terms(s.nodes, s.replicas);
    const int ia = t.link == detail::Link::kInterNode ? kAlphaN : kAlphaR;
    if (pb.sharded) {
      // The sharded form: T_micro = power sum of compute and communication
      // (one replica: 1e-8, nothing gathered), fitted to grad_time; the
      // step T_micro + alpha_1, fitted to step_time.
      const double net = t.link == detail::Link::kNone ? detail::kTiny + detail::kTiny * t.rounds
                                                       : x[ia] + x[ia + 1] * t.rounds;
      const double lo = detail::log_power_sum(pa, net, g);
      const double micro = std::exp(lo);
      const double step = micro + x[kAlpha1];
      const double d1 = lo - pb.log_grad[i];
      const double d2 = std::log(step) - pb.log_step[i];
      s1 += d1 * d1;
      s2 += d2 * d2;
      if (grad == nullptr) continue;
      const double wa = std::exp(g * (std::log(pa) - lo));
      const double wn = std::exp(g * (std::log(net) - lo));
      std::array<double, kN> dlo{};  // d lo / d x
      dlo[kAlphaC] = wa / pa;
      dlo[kBetaC] = wa / pa * s.atomic_batch;
      if (t.link != detail::Link::kNone) {
        dlo[ia] = wn / net;
        dlo[ia + 1] = wn / net * t.rounds;
      }
      dlo[kGamma] = (wa * std::log(pa) + wn * std::log(net) - lo) / g;
      const double u = micro / step;  // d log step / d lo
      for (int k = 0; k < kN; ++k) {
        g1[k] += d1 * dlo[k];
        g2[k] += d2 * u * dlo[k];
      }
      g2[kAlpha1] += d2 / step;
      continue;
    }
    const double d1 = std::log(pa) - pb.log_grad[i];
    s1 += d1 * d1;

    const double net = t.link == detail::Link::kNone ? x[kAlpha1] + detail::kTiny * t.rounds
                                                     : x[ia] + x[ia + 1] * t.rounds;
    const double lo = detail::log_power_sum(pa, net, g);
    const double d2 = lo - pb.log_step[i];
    s2 += d2 * d2;
    if (grad == nullptr) continue;

    // d lo / d pa = wa / pa, d lo / d net = wn / net with wa + wn = 1.
    const double wa = std::exp(g * (std::log(pa) - lo));
    const double wn = std::exp(g * (std::log(net) - lo));
    g1[kAlphaC] += d1 / pa;
    g1[kBetaC] += d1 * s.atomic_batch / pa;
    g2[kAlphaC] += d2 * wa / pa;
    g2[kBetaC] += d2 * wa / pa * s.atomic_batch;
    if (t.link != detail::Link::kNone) {
      g2[ia] += d2 * wn / net;
      g2[ia + 1] += d2 * wn / net * t.rounds;
    } else {
      g2[kAlpha1] += d2 * wn / net;
    }
    g2[kGamma] += d2 * (wa * std::log(pa) + wn * std::log(net) - lo) / g;
  }
  const double count = static_cast<double>(samples.size());
  const double err1 = std::sqrt(s1 / count + kSqrtGuard);
  const double err2 = std::sqrt(s2 / count + kSqrtGuard);
  const double reg1 = 1e-3 * (g - 1.0) * (g - 1.0);
  const double rn = x[kBetaN] / x[kAlphaN], rr = x[kBetaR] / x[kAlphaR];
  const double reg2 = 1e-2 * (rn * rn + rr * rr);
  if (grad != nullptr) {
    for (unsigned k = 0; k < n; ++k) grad[k] = g1[k] / (count * err1) + g2[k] / (count * err2);
    grad[kGamma] += 2e-3 * (g - 1.0);
    grad[kBetaN] += 2e-2 * rn / x[kAlphaN];
    grad[kAlphaN] -= 2e-2 * rn * rn / x[kAlphaN];
    grad[kBetaR] += 2e-2 * rr / x[kAlphaR];
    grad[kAlphaR] -= 2e-2 * rr * rr / x[kAlphaR];
  }
  ++pb.evaluations;
  return err1 + err2 + reg1 + reg2;
}

// The optimiser works on log(alpha), log(beta) and gamma: the parameters
// span five orders of magnitude, and in linear coordinates L-BFGS stalls on
// the ill-conditioning far from the optimum. The objective and its
// minimiser are the same; only the coordinates differ.
double objective_log_coords(unsigned n, const double* y, double* grad, void* data) {
  std::array<double, kN> x;
  for (int k = 0; k < kN; ++k) x[k] = k == kGamma ? y[k] : std::exp(y[k]);
  const double f = objective(n, x.data(), grad, data);
  if (grad != nullptr)
    for (int k = 0; k < kN; ++k)
      if (k != kGamma) grad[k] *= x[k];  // d/dlog(x) = x d/dx
  return f;
}

const char* status_name(nlopt_result r) {
  switch (r) {
    case NLOPT_SUCCESS: return "success";
    case NLOPT_STOPVAL_REACHED: return "stopval reached";
    case NLOPT_FTOL_REACHED: return "ftol reached";
    case NLOPT_XTOL_REACHED: return "xtol reached";
    case NLOPT_MAXEVAL_REACHED: return "max evaluations reached";
    case NLOPT_MAXTIME_REACHED: return "max time reached";
    case NLOPT_FAILURE: return "generic failure";
    case NLOPT_INVALID_ARGS: return "invalid arguments";
    case NLOPT_OUT_OF_MEMORY: return "out of memory";
    case NLOPT_ROUNDOFF_LIMITED: return "roundoff limited";
    case NLOPT_FORCED_STOP: return "forced stop";
    default: break;
  }
  return "unknown";
}

void check_samples(const std::vector<ProfileSample>& samples) {
  if (samples.empty()) throw std::invalid_argument("fit_perf_params: no samples");
  for (const ProfileSample& s : samples) {
    const bool ok = s.nodes >= 1 && s.replicas >= s.nodes && std::isfinite(s.atomic_batch) &&
                    s.atomic_batch > 0 && std::isfinite(s.grad_time) && s.grad_time > 0 &&
                    std::isfinite(s.step_time) && s.step_time > 0;
    if (!ok)
      throw std::invalid_argument("fit_perf_params: sample needs 1 <= nodes <= replicas and positive, finite times");
  }
}

}  // namespace

FitResult fit_perf_params(const std::vector<ProfileSample>& samples, const FitOptions& options) {
  check_samples(samples);
  Problem pb{&samples, options.sharded, {}, {}, 0};
  pb.log_grad.reserve(samples.size());
  pb.log_step.reserve(samples.size());
  for (const ProfileSample& s : samples) {
    pb.log_grad.push_back(std::log(s.grad_time));
    pb.log_step.push_back(std::log(s.step_time));
  }

  std::array<double, kN> x = PerfParams{}.to_array();
  x[kAlpha1] = 0.1;  // the start, as the other alphas' (the default 1e-8 is the paper's zero)
  std::array<double, kN> lower;
  std::array<double, kN> upper;
  lower.fill(detail::kTiny);
  upper.fill(HUGE_VAL);
  lower[kGamma] = 1.0;
  upper[kGamma] = 10.0;
  FitResult result;
  auto fix = [&](int k, double value) {
    x[k] = lower[k] = upper[k] = value;
    result.fixed[k] = true;
  };

  std::set<double> batches;
  bool multi_node = false, single_node_multi_replica = false, over_two = false, one_replica = false;
  double grad_sum = 0;
  for (const ProfileSample& s : samples) {
    batches.insert(s.atomic_batch);
    multi_node |= s.nodes > 1;
    single_node_multi_replica |= s.nodes == 1 && s.replicas > 1;
    over_two |= s.replicas > 2;
    one_replica |= s.replicas == 1;
    grad_sum += s.grad_time;
  }
  // Priors for what the samples cannot identify.
  if (batches.size() == 1) fix(kAlphaC, grad_sum / samples.size() / 2.0);
  if (!multi_node) {
    fix(kAlphaN, detail::kTiny);
    fix(kBetaN, detail::kTiny);
  }
  if (!single_node_multi_replica) {
    fix(kAlphaR, detail::kTiny);
    fix(kBetaR, detail::kTiny);
  }
  if (!over_two) {
    fix(kBetaN, detail::kTiny);
    fix(kBetaR, detail::kTiny);
  }
  // The paper's T_sync(1) = 0; sharded, alpha_1 is the per-step term at every size.
  if ((!one_replica && !options.sharded) || !options.one_replica_term) fix(kAlpha1, detail::kTiny);

  // To log coordinates (gamma stays linear).
  std::array<double, kN> y = x, ylo = lower, yhi = upper;
  for (int k = 0; k < kN; ++k) {
    if (k == kGamma) continue;
    y[k] = std::log(x[k]);
    ylo[k] = std::log(lower[k]);
    yhi[k] = std::isfinite(upper[k]) ? std::log(upper[k]) : HUGE_VAL;
  }
  nlopt_opt opt = nlopt_create(NLOPT_LD_LBFGS, kN);
  if (opt == nullptr) throw std::runtime_error("fit_perf_params: nlopt_create failed");
  nlopt_set_lower_bounds(opt, ylo.data());
  nlopt_set_upper_bounds(opt, yhi.data());
  nlopt_set_min_objective(opt, objective_log_coords, &pb);
  nlopt_set_ftol_rel(opt, options.rel_tolerance);
  nlopt_set_maxeval(opt, options.max_evaluations);
  double value = 0;
  const std::array<double, kN> start = y;
  const nlopt_result status = nlopt_optimize(opt, y.data(), &value);
  nlopt_destroy(opt);
  result.status = status_name(status);
  // A failed run may leave y unusable: fall back to the feasible start.
  bool finite = std::isfinite(value);
  for (double v : y) finite = finite && std::isfinite(v);
  if (status < 0 && !finite) {
    y = start;
    value = objective_log_coords(kN, y.data(), nullptr, &pb);
  }
  for (int k = 0; k < kN; ++k) {
    x[k] = k == kGamma ? y[k] : std::exp(y[k]);
    x[k] = std::clamp(x[k], lower[k], upper[k]);
  }

  result.params = PerfParams::from_array(x);
  result.params.sharded = options.sharded;
  if (!multi_node) {
    // Prior: inter-node sync is at least as slow as intra-node sync.
    result.params.alpha_n = std::max(result.params.alpha_n, result.params.alpha_r * 1.1);
    result.params.beta_n = std::max(result.params.beta_n, result.params.beta_r * 1.1);
  }
  result.objective = value;
  result.evaluations = pb.evaluations;
  return result;
}

}  // namespace pollux

// The agent's gradient-noise estimate on a synthetic problem with known
// noise, on real MPI ranks. Every micro-batch gradient of m examples is
//   g + sqrt(sigma2 / m) * z,   z ~ N(0, I_d),
// so |g|^2 and tr(Sigma) at M0, d * sigma2 / M0, are known exactly. The
// agent sees these buffers through the normal step protocol (norms before
// and after its MPI all-reduce, accumulation, the two-step fallback on one
// replica) and must recover both within --tolerance. With --external the
// agent is framework-neutral: this program accumulates and all-reduces the
// gradients itself, as PyTorch DDP does, and reports only the norms.
//
//   mpirun -np R grad-noise-mpi --atomic m --accum s --dtype float|double [--external]
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "pollux/agent_mpi.h"

namespace {

double sqnorm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return s;
}

// The framework's side of the framework-neutral mode: no_sync accumulation
// of the micro-gradients, the all-reduce, the norms (and the kept gradient
// of the one-replica pairs).
struct Framework {
  std::vector<double> accum, kept;
  double kept_sqr = 0;

  pollux::GradientNorms sync(pollux::Agent& agent, int micro_steps) {
    pollux::GradientNorms n;
    for (double& x : accum) x /= micro_steps;  // the rank's mean gradient
    n.local_sqr = sqnorm(accum);
    n.local_grads = 1;
    MPI_Allreduce(MPI_IN_PLACE, accum.data(), static_cast<int>(accum.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (double& x : accum) x /= agent.replicas();
    n.sync_sqr = sqnorm(accum);
    const pollux::TwoStep phase = agent.two_step_phase();
    if (phase == pollux::TwoStep::kKeep) {
      kept = accum;
      kept_sqr = n.sync_sqr;
    } else if (phase == pollux::TwoStep::kCompare && kept.size() == accum.size()) {
      n.has_prev = true;
      n.prev_sqr = kept_sqr;
      for (std::size_t i = 0; i < accum.size(); ++i) n.dot_prev += kept[i] * accum[i];
    }
    std::fill(accum.begin(), accum.end(), 0.0);
    return n;
  }
};

template <typename T>
int run(pollux::Agent& agent, int dim, double sigma2, double g_entry, long long steps, std::uint64_t seed) {
  std::vector<T> grad(static_cast<std::size_t>(dim));
  std::normal_distribution<double> normal;
  const bool external = agent.external();
  Framework fw;
  fw.accum.assign(grad.size(), 0.0);
  for (long long t = 0; t < steps; ++t) {
    const int m = agent.atomic_batch();
    const double scale = std::sqrt(sigma2 / m);
    for (int k = 0; k <= agent.accum_steps(); ++k) {
      // Independent noise per (rank, step, micro-step).
      std::mt19937_64 rng(seed ^ (static_cast<std::uint64_t>(agent.rank()) << 48) ^ (static_cast<std::uint64_t>(t) << 8) ^
                          static_cast<std::uint64_t>(k));
      agent.micro_step_begin();
      for (auto& x : grad) x = static_cast<T>(g_entry + scale * normal(rng));
      if (external) {
        for (std::size_t i = 0; i < grad.size(); ++i) fw.accum[i] += grad[i];
        agent.micro_step_end();
      } else {
        agent.micro_step_end({grad.data(), grad.size(), sizeof(T) == 4 ? pollux::DType::kFloat32 : pollux::DType::kFloat64});
      }
    }
    if (external) {
      agent.synchronized(fw.sync(agent, agent.accum_steps() + 1));
    } else {
      pollux::GradientBuffer g{grad.data(), grad.size(), sizeof(T) == 4 ? pollux::DType::kFloat32 : pollux::DType::kFloat64};
      agent.synchronize(g);
    }
    agent.step_end();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"gradient-noise estimate of the agent against a known synthetic noise"};
  int atomic = 16, accum = 0, dim = 4000;
  long long steps = 400;
  double m0 = 64, sigma2 = 0.5, g_entry = 0.05, tolerance = 0.10;
  std::string dtype = "float";
  bool external = false;
  app.add_option("--atomic", atomic);
  app.add_option("--accum", accum);
  app.add_option("--dim", dim);
  app.add_option("--steps", steps);
  app.add_option("--init-batch", m0);
  app.add_option("--sigma2", sigma2, "per-example noise variance per coordinate");
  app.add_option("--g", g_entry, "every coordinate of the true gradient");
  app.add_option("--tolerance", tolerance);
  app.add_flag("--external", external, "framework-neutral agent: this program all-reduces and reports the norms");
  app.add_option("--dtype", dtype)->check(CLI::IsMember({"float", "double"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    MPI_Finalize();
    return app.exit(e);
  }
  pollux::AgentOptions opt;
  opt.limits = pollux::BatchLimits{m0, 1e6, 1, 1 << 20, true};
  opt.adapt = false;
  opt.write_hints = false;
  opt.verbose = 0;
  auto agent = external ? pollux::make_external_agent(pollux::make_mpi_communicator(MPI_COMM_WORLD), opt)
                        : pollux::make_mpi_agent(MPI_COMM_WORLD, opt);
  agent->set_batch_config(atomic, accum);
  if (dtype == "float") run<float>(*agent, dim, sigma2, g_entry, steps, 12345);
  else run<double>(*agent, dim, sigma2, g_entry, steps, 12345);

  const auto est = agent->grad_stats();
  const double true_sqr = dim * g_entry * g_entry;
  const double true_var = dim * sigma2 / m0;
  int rc = 0;
  if (!est) {
    std::fprintf(stderr, "rank %d: no gradient statistics after %lld steps\n", agent->rank(), steps);
    rc = 1;
  } else {
    const double e_sqr = std::abs(est->sqr / true_sqr - 1), e_var = std::abs(est->var / true_var - 1);
    if (agent->rank() == 0)
      std::printf("replicas %d atomic %d accum %d %s%s: sqr %.5g (true %.5g, error %.2f%%) var %.5g (true %.5g, error %.2f%%)\n",
                  agent->replicas(), atomic, accum, dtype.c_str(), external ? " external" : "", est->sqr, true_sqr, 100 * e_sqr, est->var, true_var,
                  100 * e_var);
    if (e_sqr > tolerance || e_var > tolerance) rc = 1;
  }
  // Every rank must hold the same estimate (they take the same decisions).
  double mine[2] = {est ? est->sqr : -1, est ? est->var : -1}, lo[2], hi[2];
  MPI_Allreduce(mine, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (lo[0] != hi[0] || lo[1] != hi[1]) {
    if (agent->rank() == 0) std::fprintf(stderr, "ranks disagree on the estimate\n");
    rc = 1;
  }
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  agent.reset();
  MPI_Finalize();
  return any;
}

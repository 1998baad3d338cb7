// The agent's gradient-noise estimate on a synthetic problem with known
// noise, on real MPI ranks. Every micro-batch gradient of m examples is
//   g + sqrt(sigma2 / m) * z,   z ~ N(0, I_d),
// so |g|^2 and tr(Sigma) at M0, d * sigma2 / M0, are known exactly. The
// agent sees these buffers through the normal step protocol (norms before
// and after its MPI all-reduce, accumulation, the two-step fallback on one
// replica) and must recover both within --tolerance.
//
//   mpirun -np R grad-noise-mpi --atomic m --accum s --dtype float|double
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "pollux/agent_mpi.h"

namespace {

template <typename T>
int run(pollux::Agent& agent, int dim, double sigma2, double g_entry, long long steps, std::uint64_t seed) {
  std::vector<T> grad(static_cast<std::size_t>(dim));
  std::normal_distribution<double> normal;
  for (long long t = 0; t < steps; ++t) {
    const int m = agent.atomic_batch();
    const double scale = std::sqrt(sigma2 / m);
    for (int k = 0; k <= agent.accum_steps(); ++k) {
      // Independent noise per (rank, step, micro-step).
      std::mt19937_64 rng(seed ^ (static_cast<std::uint64_t>(agent.rank()) << 48) ^ (static_cast<std::uint64_t>(t) << 8) ^
                          static_cast<std::uint64_t>(k));
      agent.micro_step_begin();
      for (auto& x : grad) x = static_cast<T>(g_entry + scale * normal(rng));
      agent.micro_step_end({grad.data(), grad.size(), sizeof(T) == 4 ? pollux::DType::kFloat32 : pollux::DType::kFloat64});
    }
    pollux::GradientBuffer g{grad.data(), grad.size(), sizeof(T) == 4 ? pollux::DType::kFloat32 : pollux::DType::kFloat64};
    agent.synchronize(g);
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
  app.add_option("--atomic", atomic);
  app.add_option("--accum", accum);
  app.add_option("--dim", dim);
  app.add_option("--steps", steps);
  app.add_option("--init-batch", m0);
  app.add_option("--sigma2", sigma2, "per-example noise variance per coordinate");
  app.add_option("--g", g_entry, "every coordinate of the true gradient");
  app.add_option("--tolerance", tolerance);
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
  auto agent = pollux::make_mpi_agent(MPI_COMM_WORLD, opt);
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
      std::printf("replicas %d atomic %d accum %d %s: sqr %.5g (true %.5g, error %.2f%%) var %.5g (true %.5g, error %.2f%%)\n",
                  agent->replicas(), atomic, accum, dtype.c_str(), est->sqr, true_sqr, 100 * e_sqr, est->var, true_var,
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

// pollux-digits-bench: what the agent costs a training step.
// pollux-digits-bench-cuda: the same on GPUs (this file compiled with
// DIGITS_BENCH_CUDA: the CUDA model, the agent's CUDA backend, and the
// plain step's all-reduce by NCCL on the training stream, which each
// timed block ends by synchronising).
//
// Runs the digits trainer's step two ways on the same ranks, in
// alternating rounds: "plain" (forward/backward, MPI_Allreduce, SGD) and
// "agent" (the same through the agent's step protocol: norms before and
// after the all-reduce, the per-step packet, profiling, the adaptation
// worker's fits and the hint file). Prints the median step time of each
// and the difference, in wall time and in the process's CPU time (which
// includes the agent's background thread, and which preemption by other
// jobs on a shared node does not inflate). doc/benchmarks.md records it.
#include <mpi.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dataset.h"
#ifdef DIGITS_BENCH_CUDA
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>

#include "mlp_cuda.h"
#include "pollux/agent_cuda.h"
#else
#include "mlp_cpu.h"
#include "pollux/agent_mpi.h"
#endif

namespace {

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Timing {
  double wall, cpu;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"agent overhead per training step (digits MLP, MPI)"};
  std::string data = POLLUX_DIGITS_DATA, spool = "/tmp";
  int hidden = 256, atomic = 32, steps = 200, rounds = 15, warmup = 20;
  app.add_option("--data", data);
  app.add_option("--hidden", hidden, "hidden units (sets the step's compute)");
  app.add_option("--atomic", atomic, "examples per replica per step");
  app.add_option("--steps", steps, "timed steps per round");
  app.add_option("--rounds", rounds, "alternating plain/agent rounds");
  app.add_option("--spool", spool, "where the agent writes its hint");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    MPI_Finalize();
    return app.exit(e);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const digits::Dataset ds = digits::load_digits(data);
  const digits::Layout layout{hidden};
#ifdef DIGITS_BENCH_CUDA
  // One GPU per rank (its rank on the node), a plain NCCL communicator for
  // the plain step; the agent makes its own.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) throw std::runtime_error("no CUDA device visible");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  cudaSetDevice((local ? std::atoi(local) : 0) % devices);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t nccl = nullptr;
  if (ncclCommInitRank(&nccl, size, id, rank) != ncclSuccess) throw std::runtime_error("ncclCommInitRank failed");
  auto model = digits::make_cuda_mlp(ds, layout, 1, stream);
  auto sync = [&] { cudaStreamSynchronize(stream); };
#else
  auto model = digits::make_cpu_mlp(ds, layout, 1);
  auto sync = [] {};
#endif
  const std::vector<float> init = model->params();

  ::setenv("SLURM_JOB_ID", "999999", 0);  // so that the hint is written, as in a job
  pollux::AgentOptions opt;
  opt.limits = pollux::BatchLimits{double(atomic) * size, double(atomic) * size, 1, atomic, false};
  opt.adapt = false;  // same batch in both modes; the agent still profiles, fits and writes hints
  opt.spool_dir = spool;
  opt.checkpoint_dir = spool + "/pollux-bench-ckpt";
  opt.verbose = 0;
#ifdef DIGITS_BENCH_CUDA
  auto agent = pollux::make_cuda_agent(MPI_COMM_WORLD, stream, opt);
#else
  auto agent = pollux::make_mpi_agent(MPI_COMM_WORLD, opt);
#endif

  digits::ExampleOrder order(ds.n_train(), 1);
  std::vector<int> idx(static_cast<std::size_t>(atomic));
  long long offset = 0;
  auto batch = [&] {
    for (int j = 0; j < atomic; ++j) idx[static_cast<std::size_t>(j)] = order.at(offset + rank * atomic + j);
    offset += static_cast<long long>(atomic) * size;
  };
  auto plain_step = [&] {
    batch();
    model->compute_gradient(idx);
    pollux::GradientBuffer g = model->gradient();
    float* x = static_cast<float*>(g.data);
#ifdef DIGITS_BENCH_CUDA
    // The mean is folded into the learning rate: no pass of its own.
    ncclAllReduce(x, x, g.count, ncclFloat, ncclSum, nccl, stream);
    model->sgd_step(0.05 / size);
#else
    MPI_Allreduce(MPI_IN_PLACE, x, static_cast<int>(g.count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const float inv = 1.0f / size;
    for (std::size_t i = 0; i < g.count; ++i) x[i] *= inv;
    model->sgd_step(0.05);
#endif
  };
  auto agent_step = [&] {
    batch();
    agent->micro_step_begin();
    model->compute_gradient(idx);
    agent->micro_step_end(model->gradient());
    pollux::GradientBuffer g = model->gradient();
    agent->synchronize(g);
    model->sgd_step(0.05 * agent->lr_gain());
    agent->step_end();
  };
  auto timed = [&](auto&& step) {
    model->set_params(init);
    for (int i = 0; i < warmup; ++i) step();
    sync();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime(), c0 = cpu_seconds();
    for (int i = 0; i < steps; ++i) step();
    sync();  // a GPU's steps are done
    double t[2] = {(MPI_Wtime() - t0) / steps, (cpu_seconds() - c0) / steps};
    MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return Timing{t[0], t[1]};
  };
  std::vector<double> plain_wall, plain_cpu, agent_wall, agent_cpu;
  for (int r = 0; r < rounds; ++r) {
    const Timing p = timed(plain_step), a = timed(agent_step);
    plain_wall.push_back(p.wall);
    plain_cpu.push_back(p.cpu);
    agent_wall.push_back(a.wall);
    agent_cpu.push_back(a.cpu);
  }
  if (rank == 0) {
    const double pw = median(plain_wall), aw = median(agent_wall), pc = median(plain_cpu), ac = median(agent_cpu);
    std::printf("ranks %d hidden %d atomic %d params %zu [medians of %d rounds x %d steps]\n"
                "  wall: plain %.1f us/step, agent %.1f us/step, overhead %+.1f us (%+.2f%%)\n"
                "  cpu:  plain %.1f us/step, agent %.1f us/step, overhead %+.1f us (%+.2f%%)\n",
                size, hidden, atomic, layout.size(), rounds, steps, pw * 1e6, aw * 1e6, (aw - pw) * 1e6,
                100 * (aw / pw - 1), pc * 1e6, ac * 1e6, (ac - pc) * 1e6, 100 * (ac / pc - 1));
  }
  agent.reset();
#ifdef DIGITS_BENCH_CUDA
  model.reset();
  ncclCommDestroy(nccl);
  cudaStreamDestroy(stream);
#endif
  MPI_Finalize();
  return 0;
}

// The smallest complete elastic training program: linear least squares on
// synthetic data, data-parallel over MPI ranks, with the Pollux agent.
// doc/agent.md walks through it.
//
//   mpirun -np 2 pollux-minimal            (or srun --mpi=pmix in an sbatch job)
#include <mpi.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <vector>

#include "pollux/agent_mpi.h"

constexpr int kDim = 1000;

// Example i of the (endless, deterministic) data set: x ~ U(0,1)^kDim,
// y = <w*, x> + noise with w*_j = 1.
static void example(long long i, std::vector<float>& x, float& y) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(i));
  std::uniform_real_distribution<float> u(0, 1);
  y = 0;
  for (float& v : x) y += (v = u(rng));
  y += std::normal_distribution<float>(0, 1)(rng);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::vector<float> w(kDim, 0.0f), grad(kDim), x(kDim);

  // 1. The agent, with the job's batch-size limits (POLLUX_* may override).
  pollux::AgentOptions options;
  options.limits = pollux::BatchLimits{/*init_batch M0*/ 32, /*max_batch*/ 512,
                                       /*min_atomic*/ 4, /*max_atomic*/ 128, /*accumulation*/ true};
  options.apply_environment();
  auto agent = pollux::make_mpi_agent(MPI_COMM_WORLD, options);

  // 2. Checkpoint callbacks: the replicas are identical, rank 0 saves.
  agent->on_checkpoint([&](const pollux::CheckpointContext& c) {
    if (c.rank != 0) return;
    std::ofstream out(c.dir + "/w.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(w.data()), kDim * sizeof(float));
    if (!out) throw std::runtime_error("cannot write " + c.dir + "/w.bin");
  });
  agent->on_restore([&](const pollux::CheckpointContext& c) {
    std::ifstream in(c.dir + "/w.bin", std::ios::binary);
    in.read(reinterpret_cast<char*>(w.data()), kDim * sizeof(float));
    if (!in) throw std::runtime_error("cannot read " + c.dir + "/w.bin");
  });
  // 3. After a requeue this brings back w and the agent's state.
  agent->restore();

  const double lr0 = 0.5 / kDim;  // tuned for M0
  while (agent->progress() < 400) {  // 400 steps' worth of progress at M0
    // 4. One optimizer step: accum_steps() + 1 micro-steps of
    //    atomic_batch() examples on every replica. The global batch is the
    //    next total_batch() examples of the data order; each rank takes
    //    its slices, so a resize neither skips nor repeats an example.
    const int m = agent->atomic_batch(), R = agent->replicas();
    for (int k = 0; k <= agent->accum_steps(); ++k) {
      agent->micro_step_begin();
      std::fill(grad.begin(), grad.end(), 0.0f);
      const long long first = agent->samples_seen() + (static_cast<long long>(k) * R + agent->rank()) * m;
      for (long long i = first; i < first + m; ++i) {
        float y;
        example(i, x, y);
        float err = -y;
        for (int j = 0; j < kDim; ++j) err += w[j] * x[j];
        for (int j = 0; j < kDim; ++j) grad[j] += err * x[j] / m;  // mean over the micro-batch
      }
      agent->micro_step_end({grad.data(), grad.size(), pollux::DType::kFloat32});
    }
    // 5. All-reduce: grad becomes the mean gradient of the whole batch.
    pollux::GradientBuffer g{grad.data(), grad.size(), pollux::DType::kFloat32};
    agent->synchronize(g);
    // 6. The update, with the AdaScale learning-rate gain.
    const float lr = static_cast<float>(lr0 * agent->lr_gain());
    for (int j = 0; j < kDim; ++j) w[j] -= lr * grad[j];
    // 7. The step boundary: adaptation, hints, and the resize protocol.
    if (agent->step_end() == pollux::StepAction::kRequeueExit) {
      const int code = agent->options().requeue_exit_code;
      agent.reset();
      MPI_Finalize();
      return code;
    }
    if (agent->rank() == 0 && agent->step() % 50 == 0)
      std::printf("step %lld progress %.1f batch %lld (%d x %d x %d) w[0] %.3f\n", agent->step(), agent->progress(),
                  agent->total_batch(), R, m, agent->accum_steps() + 1, w[0]);
  }
  if (agent->rank() == 0) std::printf("done: step %lld, w[0] = %.3f (true 1)\n", agent->step(), w[0]);
  agent.reset();  // collective: before MPI_Finalize
  MPI_Finalize();
  return 0;
}

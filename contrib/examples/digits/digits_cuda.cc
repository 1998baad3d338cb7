// pollux-digits-cuda: data-parallel training of the digits classifier on
// GPUs, one MPI rank per GPU, gradients all-reduced by NCCL, elastic
// through the Pollux agent (CUDA backend). Same options and output as
// pollux-digits.
#include <cuda_runtime.h>

#include <cstdlib>
#include <stdexcept>

#include "mlp_cuda.h"
#include "pollux/agent_cuda.h"
#include "trainer.h"

namespace {

// The GPU of this rank: its rank among the ranks of its node.
int local_rank() {
  for (const char* v : {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return 0;
}

// The training stream, destroyed last.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() {
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) throw std::runtime_error("cudaStreamCreate failed");
  }
  ~Stream() { cudaStreamDestroy(s); }
};

}  // namespace

int main(int argc, char** argv) {
  return digits::mpi_main(argc, argv, "pollux-digits-cuda", "Data-parallel digits classifier on GPUs (NCCL), elastic with Pollux",
                          [](const digits::TrainOptions& opt, const digits::Dataset& data) {
                            int devices = 0;
                            if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
                              throw std::runtime_error("no CUDA device visible");
                            if (cudaSetDevice(local_rank() % devices) != cudaSuccess)
                              throw std::runtime_error("cudaSetDevice failed");
                            Stream stream;
                            const digits::Layout layout{opt.hidden};
                            auto model = digits::make_cuda_mlp(data, layout, opt.seed, stream.s);
                            auto agent = pollux::make_cuda_agent(MPI_COMM_WORLD, stream.s, digits::agent_options(opt));
                            return digits::train(*agent, *model, data, layout, opt);
                          });
}

// pollux-digits-cuda: data-parallel training of the digits classifier on
// GPUs, one MPI rank per GPU, gradients all-reduced by NCCL, elastic
// through the Pollux agent (CUDA backend). Same options and output as
// pollux-digits.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

#include "dataset.h"
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

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  digits::TrainOptions opt;
  if (auto rc = digits::parse_options(argc, argv, "Data-parallel digits classifier on GPUs (NCCL), elastic with Pollux",
                                      POLLUX_DIGITS_DATA, opt)) {
    MPI_Finalize();
    return *rc;
  }
  int rc = 0;
  try {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) throw std::runtime_error("no CUDA device visible");
    if (cudaSetDevice(local_rank() % devices) != cudaSuccess) throw std::runtime_error("cudaSetDevice failed");
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
      throw std::runtime_error("cudaStreamCreate failed");
    {
      const digits::Dataset data = digits::load_digits(opt.data);
      const digits::Layout layout{opt.hidden};
      auto model = digits::make_cuda_mlp(data, layout, opt.seed, stream);
      auto agent = pollux::make_cuda_agent(MPI_COMM_WORLD, stream, digits::agent_options(opt));
      rc = digits::train(*agent, *model, data, layout, opt);
    }
    cudaStreamDestroy(stream);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pollux-digits-cuda[%d]: error: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return rc;
}

// Agents whose gradients live on a GPU (libpollux-agent-cuda): squared
// norms by CUDA kernels (float, half, bfloat16, double), the all-reduce by
// NCCL, timing by CUDA events on the training stream. Host collectives
// (the agent's small per-step packet, checkpoints) still go over MPI.
//
// The backend never synchronises the stream in the step protocol: a
// step's measurements are read at the next step's synchronize(), when the
// GPU has finished it (the host is at most one step ahead).
#ifndef POLLUX_AGENT_CUDA_H
#define POLLUX_AGENT_CUDA_H

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <memory>

#include "pollux/agent.h"
#include "pollux/agent_backend.h"

namespace pollux {

/// A GPU backend on `stream` (the stream the gradients are computed on).
/// With `nccl` null it creates its own NCCL communicator over `mpi_comm`
/// (collective) for the current CUDA device; otherwise it uses `nccl`,
/// which must outlive it.
std::unique_ptr<StepBackend> make_cuda_backend(MPI_Comm mpi_comm, cudaStream_t stream, ncclComm_t nccl = nullptr);

/// A GPU agent: make_mpi_communicator(comm) + make_cuda_backend(). Call
/// cudaSetDevice() first. Collective over `comm`.
std::unique_ptr<Agent> make_cuda_agent(MPI_Comm comm, cudaStream_t stream, AgentOptions options,
                                       ncclComm_t nccl = nullptr);

}  // namespace pollux

#endif  // POLLUX_AGENT_CUDA_H

// Gradient kernels of the CUDA backend (compiled by nvcc, called from
// cuda_backend.cc). Every launch is asynchronous on `stream`; sums go into
// a double in device memory with atomicAdd (accumulated in double, so the
// norm of a large half-precision gradient does not overflow or lose bits).
#ifndef POLLUX_AGENT_CUDA_KERNELS_H
#define POLLUX_AGENT_CUDA_KERNELS_H

#include <cuda_runtime.h>

#include <cstddef>

#include "pollux/agent.h"

namespace pollux::cuda_detail {

/// *acc += sum x[i]^2.
cudaError_t sqnorm(const void* x, std::size_t n, DType t, double* acc, cudaStream_t stream);
/// dst[i] += src[i].
cudaError_t add(void* dst, const void* src, std::size_t n, DType t, cudaStream_t stream);
/// x[i] *= scale; *acc += sum x[i]^2 (of the scaled values).
cudaError_t scale_sqnorm(void* x, std::size_t n, DType t, double scale, double* acc, cudaStream_t stream);
/// *acc += sum a[i] * b[i].
cudaError_t dot(const void* a, const void* b, std::size_t n, DType t, double* acc, cudaStream_t stream);

}  // namespace pollux::cuda_detail

#endif  // POLLUX_AGENT_CUDA_KERNELS_H

// The classifier on a GPU: cuBLAS GEMMs and a few kernels (see model.h).
#ifndef POLLUX_EXAMPLES_MLP_CUDA_H
#define POLLUX_EXAMPLES_MLP_CUDA_H

#include <cuda_runtime.h>

#include <memory>

#include "dataset.h"
#include "model.h"

namespace digits {

/// Copies the dataset to the current device; all work goes on `stream`.
std::unique_ptr<Model> make_cuda_mlp(const Dataset& data, const Layout& layout, std::uint64_t seed, cudaStream_t stream);

}  // namespace digits

#endif  // POLLUX_EXAMPLES_MLP_CUDA_H

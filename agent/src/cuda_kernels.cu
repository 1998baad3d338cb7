// Gradient kernels of the CUDA backend (see cuda_kernels.h): grid-stride
// loops, a warp-shuffle block reduction and one double atomicAdd per block.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "cuda_kernels.h"

namespace pollux::cuda_detail {
namespace {

constexpr int kThreads = 256;

__device__ inline double load(const float* p, std::size_t i) { return p[i]; }
__device__ inline double load(const double* p, std::size_t i) { return p[i]; }
__device__ inline double load(const __half* p, std::size_t i) { return __half2float(p[i]); }
__device__ inline double load(const __nv_bfloat16* p, std::size_t i) { return __bfloat162float(p[i]); }

__device__ inline void store(float* p, std::size_t i, double v) { p[i] = static_cast<float>(v); }
__device__ inline void store(double* p, std::size_t i, double v) { p[i] = v; }
__device__ inline void store(__half* p, std::size_t i, double v) { p[i] = __float2half(static_cast<float>(v)); }
__device__ inline void store(__nv_bfloat16* p, std::size_t i, double v) { p[i] = __float2bfloat16(static_cast<float>(v)); }

// Sum of `v` over the block, added to *acc by thread 0.
__device__ inline void block_add(double v, double* acc) {
  __shared__ double warp_sums[kThreads / 32];
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? warp_sums[lane] : 0.0;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) atomicAdd(acc, v);
  }
}

template <typename T>
__global__ void sqnorm_kernel(const T* x, std::size_t n, double* acc) {
  double s = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const double v = load(x, i);
    s += v * v;
  }
  block_add(s, acc);
}

template <typename T>
__global__ void add_kernel(T* dst, const T* src, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    store(dst, i, load(dst, i) + load(src, i));
}

template <typename T>
__global__ void scale_sqnorm_kernel(T* x, std::size_t n, double scale, double* acc) {
  double s = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    store(x, i, load(x, i) * scale);
    const double v = load(x, i);  // the value as stored (rounded to T)
    s += v * v;
  }
  block_add(s, acc);
}

template <typename T>
__global__ void dot_kernel(const T* a, const T* b, std::size_t n, double* acc) {
  double s = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    s += load(a, i) * load(b, i);
  block_add(s, acc);
}

// Enough blocks to fill the GPU, no more (the loops stride).
int blocks_for(std::size_t n) {
  static int limit = [] {
    int dev = 0, sms = 80;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    return sms * 8;
  }();
  const std::size_t need = (n + kThreads - 1) / kThreads;
  return static_cast<int>(need < std::size_t(limit) ? (need > 0 ? need : 1) : limit);
}

// Calls f with a typed null pointer of the buffer's element type.
template <typename F>
cudaError_t dispatch(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: f(static_cast<float*>(nullptr)); break;
    case DType::kFloat64: f(static_cast<double*>(nullptr)); break;
    case DType::kFloat16: f(static_cast<__half*>(nullptr)); break;
    case DType::kBFloat16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t sqnorm(const void* x, std::size_t n, DType t, double* acc, cudaStream_t stream) {
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    sqnorm_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(x), n, acc);
  });
}

cudaError_t add(void* dst, const void* src, std::size_t n, DType t, cudaStream_t stream) {
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(dst), static_cast<const T*>(src), n);
  });
}

cudaError_t scale_sqnorm(void* x, std::size_t n, DType t, double scale, double* acc, cudaStream_t stream) {
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    scale_sqnorm_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(x), n, scale, acc);
  });
}

cudaError_t dot(const void* a, const void* b, std::size_t n, DType t, double* acc, cudaStream_t stream) {
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    dot_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b), n, acc);
  });
}

}  // namespace pollux::cuda_detail

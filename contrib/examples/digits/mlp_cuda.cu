// The classifier's forward and backward passes on a GPU (see model.h).
//
// Matrices are row-major like the CPU model's; cuBLAS is column-major, so
// each product is written for the transposes (a row-major r x c matrix is
// a column-major c x r one): Z^T = W X^T and so on.
#include <cublas_v2.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "mlp_cuda.h"

namespace digits {
namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

void check(cublasStatus_t rc, const char* what) {
  if (rc != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(rc));
}

constexpr int kThreads = 256;
int blocks(long long n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

__global__ void gather_rows(float* x, const float* all, const int* idx, int m) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(m) * kFeatures) return;
  const int row = static_cast<int>(i / kFeatures), col = static_cast<int>(i % kFeatures);
  x[i] = all[static_cast<long long>(idx[row]) * kFeatures + col];
}

__global__ void bias_relu(float* z, float* a, const float* b, int m, int h) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(m) * h) return;
  const float v = z[i] + b[i % h];
  z[i] = v;
  a[i] = v > 0.0f ? v : 0.0f;
}

// One thread per row: bias, softmax, cross-entropy. With `grad`, the row
// becomes dL/dz = (p - onehot) / m; otherwise correct predictions are counted.
__global__ void softmax_xent(float* z, const float* b, const int* labels, const int* idx, int m, bool grad,
                             double* loss, int* correct) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  float* row = z + static_cast<long long>(i) * kClasses;
  const int y = labels[idx != nullptr ? idx[i] : i];
  float mx = -3.4e38f;
  int arg = 0;
  for (int c = 0; c < kClasses; ++c) {
    row[c] += b[c];
    if (row[c] > mx) mx = row[c], arg = c;
  }
  float sum = 0;
  for (int c = 0; c < kClasses; ++c) sum += expf(row[c] - mx);
  atomicAdd(loss, static_cast<double>(logf(sum) + mx - row[y]));
  if (grad) {
    for (int c = 0; c < kClasses; ++c) row[c] = (expf(row[c] - mx) / sum - (c == y ? 1.0f : 0.0f)) / m;
  } else if (arg == y) {
    atomicAdd(correct, 1);
  }
}

__global__ void relu_backward(float* d, const float* z, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n && z[i] <= 0.0f) d[i] = 0.0f;
}

// dst[c] = sum over rows of m (rows x cols, row-major).
__global__ void column_sums(float* dst, const float* m, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0;
  for (int r = 0; r < rows; ++r) s += m[static_cast<long long>(r) * cols + c];
  dst[c] = s;
}

__global__ void sgd(float* p, const float* g, float lr, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] -= lr * g[i];
}

template <typename T>
T* device_alloc(std::size_t n) {
  void* p = nullptr;
  check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
  return static_cast<T*>(p);
}

class MlpCuda final : public Model {
 public:
  MlpCuda(const Dataset& data, const Layout& layout, std::uint64_t seed, cudaStream_t stream)
      : l_(layout), stream_(stream), n_val_(data.n_val()) {
    check(cublasCreate(&blas_), "cublasCreate");
    check(cublasSetStream(blas_, stream_), "cublasSetStream");
    params_ = device_alloc<float>(l_.size());
    grad_ = device_alloc<float>(l_.size());
    set_params(init_params(l_, seed));
    train_x_ = upload(data.train_x);
    train_y_ = upload(data.train_y);
    val_x_ = upload(data.val_x);
    val_y_ = upload(data.val_y);
    loss_ = device_alloc<double>(1);
    correct_ = device_alloc<int>(1);
    reserve(n_val_);
  }

  ~MlpCuda() override {
    cudaStreamSynchronize(stream_);
    for (void* p : {static_cast<void*>(params_), static_cast<void*>(grad_), static_cast<void*>(train_x_),
                    static_cast<void*>(train_y_), static_cast<void*>(val_x_), static_cast<void*>(val_y_),
                    static_cast<void*>(loss_), static_cast<void*>(correct_), static_cast<void*>(x_),
                    static_cast<void*>(z1_), static_cast<void*>(a1_), static_cast<void*>(z2_), static_cast<void*>(idx_)})
      cudaFree(p);
    cublasDestroy(blas_);
  }

  void compute_gradient(const std::vector<int>& idx) override {
    const int m = static_cast<int>(idx.size());
    reserve(m);
    // From pageable memory the copy is staged before the call returns, so
    // `idx` may be reused at once.
    check(cudaMemcpyAsync(idx_, idx.data(), idx.size() * sizeof(int), cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    gather_rows<<<blocks(static_cast<long long>(m) * kFeatures), kThreads, 0, stream_>>>(x_, train_x_, idx_, m);
    check(cudaMemsetAsync(loss_, 0, sizeof(double), stream_), "cudaMemsetAsync");
    forward(x_, m, train_y_, idx_, true);
    const float one = 1, zero = 0;
    const int h = l_.hidden;
    float* gw1 = grad_ + l_.w1();
    float* gb1 = grad_ + l_.b1();
    float* gw2 = grad_ + l_.w2();
    float* gb2 = grad_ + l_.b2();
    // gW2^T (h x 10) = A1^T (h x m) * dZ2 (m x 10)
    check(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_T, h, kClasses, m, &one, a1_, h, z2_, kClasses, &zero, gw2, h), "sgemm gW2");
    column_sums<<<blocks(kClasses), kThreads, 0, stream_>>>(gb2, z2_, m, kClasses);
    // dA1^T (h x m) = W2^T (h x 10) * dZ2^T (10 x m); reuses a1_
    check(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, h, m, kClasses, &one, params_ + l_.w2(), h, z2_, kClasses, &zero, a1_, h),
          "sgemm dA1");
    relu_backward<<<blocks(static_cast<long long>(m) * h), kThreads, 0, stream_>>>(a1_, z1_, static_cast<long long>(m) * h);
    // gW1^T (64 x h) = X^T (64 x m) * dZ1 (m x h)
    check(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_T, kFeatures, h, m, &one, x_, kFeatures, a1_, h, &zero, gw1, kFeatures),
          "sgemm gW1");
    column_sums<<<blocks(h), kThreads, 0, stream_>>>(gb1, a1_, m, h);
    check(cudaGetLastError(), "gradient kernels");
    last_m_ = m;
  }

  double last_loss() override {
    double l = 0;
    check(cudaMemcpyAsync(&l, loss_, sizeof l, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return last_m_ > 0 ? l / last_m_ : 0;
  }

  pollux::GradientBuffer gradient() override { return pollux::GradientBuffer{grad_, l_.size(), pollux::DType::kFloat32}; }

  void sgd_step(double lr) override {
    sgd<<<blocks(static_cast<long long>(l_.size())), kThreads, 0, stream_>>>(params_, grad_, static_cast<float>(lr),
                                                                             static_cast<long long>(l_.size()));
    check(cudaGetLastError(), "sgd kernel");
  }

  void evaluate(double& loss, double& accuracy) override {
    check(cudaMemsetAsync(loss_, 0, sizeof(double), stream_), "cudaMemsetAsync");
    check(cudaMemsetAsync(correct_, 0, sizeof(int), stream_), "cudaMemsetAsync");
    forward(val_x_, n_val_, val_y_, nullptr, false);
    double l = 0;
    int c = 0;
    check(cudaMemcpyAsync(&l, loss_, sizeof l, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(&c, correct_, sizeof c, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    loss = l / n_val_;
    accuracy = static_cast<double>(c) / n_val_;
  }

  std::vector<float> params() const override {
    std::vector<float> p(l_.size());
    check(cudaMemcpyAsync(p.data(), params_, p.size() * sizeof(float), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return p;
  }

  void set_params(const std::vector<float>& p) override {
    if (p.size() != l_.size()) throw std::invalid_argument("parameter count mismatch");
    check(cudaMemcpyAsync(params_, p.data(), p.size() * sizeof(float), cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  template <typename T>
  T* upload(const std::vector<T>& v) {
    T* d = device_alloc<T>(v.size());
    check(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    return d;
  }

  void reserve(int m) {
    if (m <= capacity_) return;
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    for (void* p : {static_cast<void*>(x_), static_cast<void*>(z1_), static_cast<void*>(a1_), static_cast<void*>(z2_),
                    static_cast<void*>(idx_)})
      if (p != nullptr) cudaFree(p);
    const std::size_t rows = static_cast<std::size_t>(m);
    x_ = device_alloc<float>(rows * kFeatures);
    z1_ = device_alloc<float>(rows * l_.hidden);
    a1_ = device_alloc<float>(rows * l_.hidden);
    z2_ = device_alloc<float>(rows * kClasses);
    idx_ = device_alloc<int>(rows);
    capacity_ = m;
  }

  // Z1 = X W1^T + b1, A1 = relu(Z1), Z2 = A1 W2^T, then softmax/loss.
  void forward(const float* x, int m, const int* labels, const int* idx, bool grad) {
    const float one = 1, zero = 0;
    const int h = l_.hidden;
    // Z1^T (h x m) = W1 (h x 64) * X^T (64 x m)
    check(cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, h, m, kFeatures, &one, params_ + l_.w1(), kFeatures, x, kFeatures,
                      &zero, z1_, h), "sgemm Z1");
    bias_relu<<<blocks(static_cast<long long>(m) * h), kThreads, 0, stream_>>>(z1_, a1_, params_ + l_.b1(), m, h);
    // Z2^T (10 x m) = W2 (10 x h) * A1^T (h x m)
    check(cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, kClasses, m, h, &one, params_ + l_.w2(), h, a1_, h, &zero, z2_,
                      kClasses), "sgemm Z2");
    softmax_xent<<<blocks(m), kThreads, 0, stream_>>>(z2_, params_ + l_.b2(), labels, idx, m, grad, loss_, correct_);
    check(cudaGetLastError(), "forward kernels");
  }

  Layout l_;
  cudaStream_t stream_;
  int n_val_;
  cublasHandle_t blas_ = nullptr;
  float *params_ = nullptr, *grad_ = nullptr, *train_x_ = nullptr, *val_x_ = nullptr;
  int *train_y_ = nullptr, *val_y_ = nullptr, *correct_ = nullptr, *idx_ = nullptr;
  double* loss_ = nullptr;
  float *x_ = nullptr, *z1_ = nullptr, *a1_ = nullptr, *z2_ = nullptr;
  int capacity_ = 0;
  int last_m_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_cuda_mlp(const Dataset& data, const Layout& layout, std::uint64_t seed, cudaStream_t stream) {
  return std::make_unique<MlpCuda>(data, layout, seed, stream);
}

}  // namespace digits

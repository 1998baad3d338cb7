// The CUDA/NCCL step backend (see pollux/agent_cuda.h).
//
// Two slots alternate between consecutive steps: while step t+1's
// micro-steps record their events in one slot, step t's events and
// norms, in the other, are read by take_record() once its "done" event
// has completed.
#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_kernels.h"
#include "pollux/agent_cuda.h"
#include "pollux/agent_mpi.h"

namespace pollux {
namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

void check(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(rc));
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::kFloat32: return ncclFloat32;
    case DType::kFloat64: return ncclFloat64;
    case DType::kFloat16: return ncclFloat16;
    case DType::kBFloat16: return ncclBfloat16;
  }
  throw std::invalid_argument("unknown gradient type");
}

// Device memory freed on destruction, grown on demand.
class DeviceBuffer {
 public:
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  void* get(std::size_t bytes) {
    if (bytes > size_) {
      if (ptr_ != nullptr) check(cudaFree(ptr_), "cudaFree");
      ptr_ = nullptr;
      check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
      size_ = bytes;
    }
    return ptr_;
  }
  std::size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
};

enum Scalar { kLocalSqr, kSyncSqr, kDotPrev, kScalars };

// Everything one in-flight step needs.
struct Slot {
  std::vector<cudaEvent_t> begin, end;  // per micro-step
  cudaEvent_t sync_end = nullptr, done = nullptr;
  double* device = nullptr;  // kScalars device doubles
  double* host = nullptr;    // kScalars pinned host doubles
  int micro = 0;
  bool has_prev = false;
  bool keeps = false;  // this step's gradient is the first of a two-step pair
  bool in_flight = false;
};

class CudaBackend final : public StepBackend {
 public:
  CudaBackend(MPI_Comm mpi, cudaStream_t stream, ncclComm_t nccl) : stream_(stream), nccl_(nccl) {
    if (nccl_ == nullptr) {
      int rank = 0, size = 1;
      MPI_Comm_rank(mpi, &rank);
      MPI_Comm_size(mpi, &size);
      ncclUniqueId id;
      if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
      MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi);
      check(ncclCommInitRank(&nccl_, size, id, rank), "ncclCommInitRank");
      own_nccl_ = true;
    }
    for (Slot& s : slots_) {
      check(cudaEventCreate(&s.sync_end), "cudaEventCreate");
      check(cudaEventCreate(&s.done), "cudaEventCreate");
      check(cudaMalloc(reinterpret_cast<void**>(&s.device), kScalars * sizeof(double)), "cudaMalloc");
      check(cudaMemset(s.device, 0, kScalars * sizeof(double)), "cudaMemset");
      check(cudaMallocHost(reinterpret_cast<void**>(&s.host), kScalars * sizeof(double)), "cudaMallocHost");
    }
  }

  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    for (Slot& s : slots_) {
      for (cudaEvent_t e : s.begin) cudaEventDestroy(e);
      for (cudaEvent_t e : s.end) cudaEventDestroy(e);
      cudaEventDestroy(s.sync_end);
      cudaEventDestroy(s.done);
      cudaFree(s.device);
      cudaFreeHost(s.host);
    }
    if (own_nccl_) ncclCommDestroy(nccl_);
  }

  void micro_begin() override {
    Slot& s = slots_[cur_];
    if (s.micro == static_cast<int>(s.begin.size())) {
      cudaEvent_t b, e;
      check(cudaEventCreate(&b), "cudaEventCreate");
      check(cudaEventCreate(&e), "cudaEventCreate");
      s.begin.push_back(b);
      s.end.push_back(e);
    }
    check(cudaEventRecord(s.begin[static_cast<std::size_t>(s.micro)], stream_), "cudaEventRecord");
  }

  void micro_end(const GradientBuffer& g, bool accumulate) override {
    Slot& s = slots_[cur_];
    check(cuda_detail::sqnorm(g.data, g.count, g.dtype, s.device + kLocalSqr, stream_), "sqnorm kernel");
    if (accumulate) {
      const std::size_t bytes = g.count * dtype_size(g.dtype);
      void* acc = accum_.get(bytes);
      if (accumulated_ == 0) check(cudaMemcpyAsync(acc, g.data, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync");
      else check(cuda_detail::add(acc, g.data, g.count, g.dtype, stream_), "add kernel");
      ++accumulated_;
    }
    check(cudaEventRecord(s.end[static_cast<std::size_t>(s.micro)], stream_), "cudaEventRecord");
    ++s.micro;
  }

  void synchronize(GradientBuffer& g, int num_grads, TwoStep two_step, Communicator&) override {
    Slot& s = slots_[cur_];
    const std::size_t bytes = g.count * dtype_size(g.dtype);
    if (accumulated_ > 0) check(cuda_detail::add(g.data, accum_.get(bytes), g.count, g.dtype, stream_), "add kernel");
    accumulated_ = 0;
    check(ncclAllReduce(g.data, g.data, g.count, nccl_type(g.dtype), ncclSum, nccl_, stream_), "ncclAllReduce");
    check(cuda_detail::scale_sqnorm(g.data, g.count, g.dtype, 1.0 / num_grads, s.device + kSyncSqr, stream_),
          "scale_sqnorm kernel");
    s.has_prev = false;
    if (two_step == TwoStep::kKeep) {
      check(cudaMemcpyAsync(prev_.get(bytes), g.data, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync");
      prev_bytes_ = bytes;
      prev_valid_ = true;
    } else {
      if (two_step == TwoStep::kCompare && prev_valid_ && prev_bytes_ == bytes) {
        check(cuda_detail::dot(prev_.get(bytes), g.data, g.count, g.dtype, s.device + kDotPrev, stream_), "dot kernel");
        s.has_prev = true;
      }
      prev_valid_ = false;
    }
    s.keeps = two_step == TwoStep::kKeep;
    check(cudaEventRecord(s.sync_end, stream_), "cudaEventRecord");
    check(cudaMemcpyAsync(s.host, s.device, kScalars * sizeof(double), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    check(cudaMemsetAsync(s.device, 0, kScalars * sizeof(double), stream_), "cudaMemsetAsync");
    check(cudaEventRecord(s.done, stream_), "cudaEventRecord");
    s.in_flight = true;
    last_ = cur_;
    cur_ ^= 1;
    slots_[cur_].micro = 0;
  }

  StepRecord take_record() override {
    StepRecord r;
    Slot& s = slots_[last_];
    if (!s.in_flight) return r;
    s.in_flight = false;
    check(cudaEventSynchronize(s.done), "cudaEventSynchronize");
    r.valid = s.micro > 0;
    r.micro_steps = s.micro;
    r.local_sqr_sum = s.host[kLocalSqr];
    r.sync_sqr = s.host[kSyncSqr];
    r.dot_prev = s.host[kDotPrev];
    r.has_prev = s.has_prev && have_kept_sqr_;
    r.prev_sqr = kept_sqr_;
    for (int k = 0; k < s.micro; ++k) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, s.begin[static_cast<std::size_t>(k)], s.end[static_cast<std::size_t>(k)]), "cudaEventElapsedTime");
      r.grad_time_sum += ms * 1e-3;
    }
    float ms = 0;
    check(cudaEventElapsedTime(&ms, s.begin[static_cast<std::size_t>(s.micro - 1)], s.sync_end), "cudaEventElapsedTime");
    r.step_time = ms * 1e-3;
    if (s.keeps) {
      kept_sqr_ = r.sync_sqr;
      have_kept_sqr_ = true;
    }
    return r;
  }

  void reset() override {
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    for (Slot& s : slots_) {
      s.in_flight = false;
      s.micro = 0;
      check(cudaMemset(s.device, 0, kScalars * sizeof(double)), "cudaMemset");
    }
    accumulated_ = 0;
    prev_valid_ = false;
    have_kept_sqr_ = false;
  }

 private:
  cudaStream_t stream_;
  ncclComm_t nccl_ = nullptr;
  bool own_nccl_ = false;
  std::array<Slot, 2> slots_;
  int cur_ = 0, last_ = 0;
  DeviceBuffer accum_, prev_;
  int accumulated_ = 0;
  bool prev_valid_ = false;
  std::size_t prev_bytes_ = 0;
  double kept_sqr_ = 0;
  bool have_kept_sqr_ = false;
};

}  // namespace

std::unique_ptr<StepBackend> make_cuda_backend(MPI_Comm mpi, cudaStream_t stream, ncclComm_t nccl) {
  return std::make_unique<CudaBackend>(mpi, stream, nccl);
}

std::unique_ptr<Agent> make_cuda_agent(MPI_Comm comm, cudaStream_t stream, AgentOptions options, ncclComm_t nccl) {
  auto c = make_mpi_communicator(comm);
  auto b = make_cuda_backend(comm, stream, nccl);
  if (options.device_name.empty()) {  // the current device's, for the GPU type (reported_gpu_type())
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess)
      options.device_name = prop.name;
  }
  return std::make_unique<Agent>(std::move(c), std::move(b), std::move(options), JobEnvironment::from_environment());
}

}  // namespace pollux

// The C entry point of libpollux-agent-cuda (declared in pollux/agent_c.h).
#include "c_handle.h"

extern "C" pollux_agent* pollux_agent_create_cuda(const pollux_agent_options* o, int mpi_comm_f, void* stream) {
  pollux_agent* handle = nullptr;
  pollux::agent_detail::c_call([&] {
    if (o == nullptr) throw std::invalid_argument("null options");
    auto agent = pollux::make_cuda_agent(MPI_Comm_f2c(static_cast<MPI_Fint>(mpi_comm_f)), static_cast<cudaStream_t>(stream),
                                         pollux::agent_detail::from_c(*o));
    handle = new pollux_agent{std::move(agent)};
    return 0;
  });
  return handle;
}

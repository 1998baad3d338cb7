// Host gradients: squared norms in double precision, accumulation, the
// all-reduce through the communicator, steady-clock timing.
#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "host_step_record.h"
#include "pollux/agent_backend.h"

namespace pollux {
namespace {

// The passes over the gradient are Eigen's vectorised reductions over
// chunks that fit in L1, each chunk's float sum added to a double total:
// fast (these passes are most of the agent's per-step cost) and accurate
// for any gradient size.
constexpr std::size_t kChunk = 4096;

template <typename T>
using ConstVec = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;
template <typename T>
using Vec = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;

template <typename T>
double sqnorm(const T* x, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; i += kChunk)
    total += ConstVec<T>(x + i, static_cast<Eigen::Index>(std::min(kChunk, n - i))).squaredNorm();
  return total;
}

template <typename T>
double scale_sqnorm(T* x, std::size_t n, double scale) {
  double total = 0;
  for (std::size_t i = 0; i < n; i += kChunk) {
    Vec<T> v(x + i, static_cast<Eigen::Index>(std::min(kChunk, n - i)));
    v *= static_cast<T>(scale);
    total += v.squaredNorm();
  }
  return total;
}

template <typename T>
double dot(const T* a, const T* b, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; i += kChunk) {
    const auto len = static_cast<Eigen::Index>(std::min(kChunk, n - i));
    total += ConstVec<T>(a + i, len).dot(ConstVec<T>(b + i, len));
  }
  return total;
}

template <typename T>
void add_into(T* dst, const T* src, std::size_t n) {
  Vec<T>(dst, static_cast<Eigen::Index>(n)) += ConstVec<T>(src, static_cast<Eigen::Index>(n));
}

// Calls f with the buffer's element type.
template <typename F>
auto with_type(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    default: break;
  }
  throw std::invalid_argument("the CPU agent measures float32 and float64 gradients only (use the CUDA agent for half/bfloat16)");
}

class CpuBackend final : public StepBackend {
 public:
  void micro_begin() override { record_.micro_begin(); }

  void micro_end(const GradientBuffer& g, bool accumulate) override {
    check(g);
    with_type(g.dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* x = static_cast<const T*>(g.data);
      record_.current().local_sqr_sum += sqnorm(x, g.count);
      if (accumulate) {
        const std::size_t bytes = g.count * sizeof(T);
        if (accumulated_ == 0) {
          accum_.resize(bytes);
          std::memcpy(accum_.data(), x, bytes);
        } else {
          add_into(reinterpret_cast<T*>(accum_.data()), x, g.count);
        }
        ++accumulated_;
      }
      return 0;
    });
    record_.micro_end();
  }

  void synchronize(GradientBuffer& g, int num_grads, TwoStep two_step, Communicator& comm) override {
    check(g);
    StepRecord& cur = record_.current();
    with_type(g.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* x = static_cast<T*>(g.data);
      if (accumulated_ > 0) {
        if (accum_.size() != g.count * sizeof(T))
          throw std::invalid_argument("gradient buffer changed size between micro-steps");
        add_into(x, reinterpret_cast<const T*>(accum_.data()), g.count);
      }
      comm.allreduce_sum(x, g.count, g.dtype);
      cur.sync_sqr = scale_sqnorm(x, g.count, 1.0 / num_grads);
      const std::size_t bytes = g.count * sizeof(T);
      if (two_step == TwoStep::kKeep) {
        prev_.resize(bytes);
        std::memcpy(prev_.data(), x, bytes);
        prev_sqr_ = cur.sync_sqr;
        prev_valid_ = true;
      } else {
        if (two_step == TwoStep::kCompare && prev_valid_ && prev_.size() == bytes) {
          cur.has_prev = true;
          cur.prev_sqr = prev_sqr_;
          cur.dot_prev = dot(reinterpret_cast<const T*>(prev_.data()), x, g.count);
        }
        prev_valid_ = false;
      }
      return 0;
    });
    accumulated_ = 0;
    record_.finish();
  }

  StepRecord take_record() override { return record_.take(); }

  void reset() override {
    record_.reset();
    accumulated_ = 0;
    prev_valid_ = false;
  }

 private:
  static void check(const GradientBuffer& g) {
    if (g.data == nullptr && g.count > 0) throw std::invalid_argument("gradient buffer is null");
  }

  agent_detail::HostStepRecord record_;
  std::vector<unsigned char> accum_, prev_;
  int accumulated_ = 0;
  bool prev_valid_ = false;
  double prev_sqr_ = 0;
};

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int nodes() const override { return 1; }
  void start_allreduce(double*, int) override {}
  void wait_allreduce() override {}
  void allreduce_sum(void*, std::size_t, DType) override {}
  void broadcast(std::string&, int) override {}
  void barrier() override {}
};

}  // namespace

std::unique_ptr<StepBackend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }
std::unique_ptr<Communicator> make_local_communicator() { return std::make_unique<LocalCommunicator>(); }

}  // namespace pollux

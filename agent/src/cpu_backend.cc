// Host gradients: squared norms in double precision, accumulation, the
// all-reduce through the communicator, steady-clock timing.
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "pollux/agent_backend.h"

namespace pollux {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Eight partial sums: lets the compiler pipeline the loop without
// reassociating a single floating-point sum.
template <typename T>
double sqnorm(const T* x, std::size_t n) {
  double acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += static_cast<double>(x[i + k]) * static_cast<double>(x[i + k]);
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

template <typename T>
double scale_sqnorm(T* x, std::size_t n, double scale) {
  const T s = static_cast<T>(scale);
  for (std::size_t i = 0; i < n; ++i) x[i] *= s;
  return sqnorm(x, n);
}

template <typename T>
double dot(const T* x, const T* y, std::size_t n) {
  double acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += static_cast<double>(x[i + k]) * static_cast<double>(y[i + k]);
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

template <typename T>
void add_into(T* dst, const T* src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
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
  void micro_begin() override { micro_start_ = Clock::now(); }

  void micro_end(const GradientBuffer& g, bool accumulate) override {
    check(g);
    with_type(g.dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* x = static_cast<const T*>(g.data);
      cur_.local_sqr_sum += sqnorm(x, g.count);
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
    ++cur_.micro_steps;
    last_micro_start_ = micro_start_;
    cur_.grad_time_sum += seconds(micro_start_, Clock::now());
  }

  void synchronize(GradientBuffer& g, int num_grads, bool keep, Communicator& comm) override {
    check(g);
    with_type(g.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* x = static_cast<T*>(g.data);
      if (accumulated_ > 0) {
        if (accum_.size() != g.count * sizeof(T))
          throw std::invalid_argument("gradient buffer changed size between micro-steps");
        add_into(x, reinterpret_cast<const T*>(accum_.data()), g.count);
      }
      comm.allreduce_sum(x, g.count, g.dtype);
      cur_.sync_sqr = scale_sqnorm(x, g.count, 1.0 / num_grads);
      if (keep) {
        const std::size_t bytes = g.count * sizeof(T);
        if (prev_valid_ && prev_.size() == bytes) {
          cur_.has_prev = true;
          cur_.prev_sqr = prev_sqr_;
          cur_.dot_prev = dot(reinterpret_cast<const T*>(prev_.data()), x, g.count);
        }
        prev_.resize(bytes);
        std::memcpy(prev_.data(), x, bytes);
        prev_sqr_ = cur_.sync_sqr;
        prev_valid_ = true;
      } else {
        prev_valid_ = false;
      }
      return 0;
    });
    accumulated_ = 0;
    cur_.step_time = seconds(last_micro_start_, Clock::now());
    cur_.valid = cur_.micro_steps > 0;
    done_ = cur_;
    cur_ = StepRecord{};
  }

  StepRecord take_record() override {
    StepRecord r = done_;
    done_ = StepRecord{};
    return r;
  }

  void reset() override {
    cur_ = done_ = StepRecord{};
    accumulated_ = 0;
    prev_valid_ = false;
  }

 private:
  static void check(const GradientBuffer& g) {
    if (g.data == nullptr && g.count > 0) throw std::invalid_argument("gradient buffer is null");
  }

  Clock::time_point micro_start_{}, last_micro_start_{};
  StepRecord cur_, done_;
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

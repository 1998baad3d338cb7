// The classifier: a one-hidden-layer perceptron (64 -> hidden -> 10, ReLU,
// softmax cross-entropy) trained by SGD. Model is what the training loop
// needs of it; MlpCpu (Eigen) and MlpCuda (cuBLAS + kernels) implement it
// with the same parameter layout, initialisation and loss.
#ifndef POLLUX_EXAMPLES_MODEL_H
#define POLLUX_EXAMPLES_MODEL_H

#include <cstdint>
#include <string>
#include <vector>

#include "pollux/agent.h"

namespace digits {

/// Parameter layout, one flat float buffer: W1 (hidden x 64, row-major),
/// b1 (hidden), W2 (10 x hidden), b2 (10).
struct Layout {
  int hidden = 256;
  std::size_t w1() const { return 0; }
  std::size_t b1() const { return w1() + static_cast<std::size_t>(hidden) * 64; }
  std::size_t w2() const { return b1() + static_cast<std::size_t>(hidden); }
  std::size_t b2() const { return w2() + static_cast<std::size_t>(hidden) * 10; }
  std::size_t size() const { return b2() + 10; }
};

/// He-normal weights, zero biases, from `seed` (same values everywhere).
std::vector<float> init_params(const Layout& layout, std::uint64_t seed);

class Model {
 public:
  virtual ~Model() = default;
  /// Gradient of the mean loss over training examples `idx` into
  /// gradient() (asynchronously on a GPU).
  virtual void compute_gradient(const std::vector<int>& idx) = 0;
  /// Mean loss of the last compute_gradient() (waits for it on a GPU).
  virtual double last_loss() = 0;
  /// The gradient buffer the agent measures and synchronises.
  virtual pollux::GradientBuffer gradient() = 0;
  /// params -= lr * gradient.
  virtual void sgd_step(double lr) = 0;
  /// Mean loss and accuracy on the validation set.
  virtual void evaluate(double& loss, double& accuracy) = 0;
  virtual std::vector<float> params() const = 0;
  virtual void set_params(const std::vector<float>& p) = 0;
};

/// Writes `params` to `path` with a header and a CRC-32 (atomic replace).
void save_params(const std::string& path, const Layout& layout, const std::vector<float>& params);
/// Reads what save_params() wrote; throws std::runtime_error naming the
/// file if it is missing, of another layout or corrupt.
std::vector<float> load_params(const std::string& path, const Layout& layout);

}  // namespace digits

#endif  // POLLUX_EXAMPLES_MODEL_H

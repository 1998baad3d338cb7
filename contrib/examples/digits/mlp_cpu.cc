// The classifier's forward and backward passes with Eigen (see model.h).
#include "mlp_cpu.h"

#include <Eigen/Dense>
#include <cmath>

namespace digits {
namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatMap = Eigen::Map<Mat>;
using ConstMatMap = Eigen::Map<const Mat>;
using Vec = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using VecMap = Eigen::Map<Vec>;

class MlpCpu final : public Model {
 public:
  MlpCpu(const Dataset& data, const Layout& layout, std::uint64_t seed)
      : data_(data), l_(layout), params_(init_params(layout, seed)), grad_(layout.size(), 0.0f) {}

  double last_loss() override { return loss_; }

  void compute_gradient(const std::vector<int>& idx) override {
    const int m = static_cast<int>(idx.size());
    x_.resize(m, kFeatures);
    for (int i = 0; i < m; ++i)
      x_.row(i) = ConstMatMap(&data_.train_x[static_cast<std::size_t>(idx[i]) * kFeatures], 1, kFeatures);
    forward(x_);
    // Softmax cross-entropy: dZ2 = (P - Y) / m.
    double loss = 0;
    for (int i = 0; i < m; ++i) {
      const int y = data_.train_y[static_cast<std::size_t>(idx[i])];
      loss -= std::log(std::max(p_(i, y), 1e-30f));
      p_(i, y) -= 1.0f;
    }
    p_ /= static_cast<float>(m);
    MatMap(&grad_[l_.w2()], kClasses, l_.hidden).noalias() = p_.transpose() * a1_;
    VecMap(&grad_[l_.b2()], kClasses) = p_.colwise().sum();
    Mat da1 = p_ * w2();
    da1 = (z1_.array() > 0.0f).select(da1, 0.0f);
    MatMap(&grad_[l_.w1()], l_.hidden, kFeatures).noalias() = da1.transpose() * x_;
    VecMap(&grad_[l_.b1()], l_.hidden) = da1.colwise().sum();
    loss_ = loss / m;
  }

  pollux::GradientBuffer gradient() override {
    return pollux::GradientBuffer{grad_.data(), grad_.size(), pollux::DType::kFloat32};
  }

  void sgd_step(double lr) override {
    const float a = static_cast<float>(lr);
    for (std::size_t i = 0; i < params_.size(); ++i) params_[i] -= a * grad_[i];
  }

  void evaluate(double& loss, double& accuracy) override {
    const int n = data_.n_val();
    forward(ConstMatMap(data_.val_x.data(), n, kFeatures));
    double l = 0;
    int correct = 0;
    for (int i = 0; i < n; ++i) {
      Eigen::Index arg = 0;
      p_.row(i).maxCoeff(&arg);
      correct += static_cast<int>(arg) == data_.val_y[static_cast<std::size_t>(i)];
      l -= std::log(std::max(p_(i, data_.val_y[static_cast<std::size_t>(i)]), 1e-30f));
    }
    loss = l / n;
    accuracy = static_cast<double>(correct) / n;
  }

  std::vector<float> params() const override { return params_; }
  void set_params(const std::vector<float>& p) override { params_ = p; }

 private:
  ConstMatMap w1() const { return ConstMatMap(&params_[l_.w1()], l_.hidden, kFeatures); }
  ConstMatMap w2() const { return ConstMatMap(&params_[l_.w2()], kClasses, l_.hidden); }

  template <typename X>
  void forward(const X& x) {
    z1_.noalias() = x * w1().transpose();
    z1_.rowwise() += VecMap(const_cast<float*>(&params_[l_.b1()]), l_.hidden);
    a1_ = z1_.cwiseMax(0.0f);
    p_.noalias() = a1_ * w2().transpose();
    p_.rowwise() += VecMap(const_cast<float*>(&params_[l_.b2()]), kClasses);
    // Row-wise softmax, stabilised by the row maximum.
    for (Eigen::Index i = 0; i < p_.rows(); ++i) {
      auto row = p_.row(i);
      row.array() = (row.array() - row.maxCoeff()).exp();
      row /= row.sum();
    }
  }

  const Dataset& data_;
  Layout l_;
  std::vector<float> params_, grad_;
  Mat x_, z1_, a1_, p_;
  double loss_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_cpu_mlp(const Dataset& data, const Layout& layout, std::uint64_t seed) {
  return std::make_unique<MlpCpu>(data, layout, seed);
}

}  // namespace digits

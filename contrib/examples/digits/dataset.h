// scikit-learn's handwritten digits (1797 images of 8x8 pixels, 10
// classes), read from the digits.csv.gz that Debian's python3-sklearn
// ships, with a fixed train/validation split and a deterministic example
// order that depends only on the global example index, so that a run
// resumed after a resize sees exactly the data a continuous run would.
#ifndef POLLUX_EXAMPLES_DATASET_H
#define POLLUX_EXAMPLES_DATASET_H

#include <cstdint>
#include <string>
#include <vector>

namespace digits {

inline constexpr int kFeatures = 64;
inline constexpr int kClasses = 10;

struct Dataset {
  std::vector<float> train_x;  ///< n_train x kFeatures, row-major, pixels / 16
  std::vector<int> train_y;
  std::vector<float> val_x;
  std::vector<int> val_y;
  int n_train() const { return static_cast<int>(train_y.size()); }
  int n_val() const { return static_cast<int>(val_y.size()); }
};

/// Loads `path` (gzip'ed CSV: 64 pixel values then the label per line) and
/// splits it: a shuffle with `split_seed`, the last `val_fraction` for
/// validation. Throws std::runtime_error naming the file and line.
Dataset load_digits(const std::string& path, std::uint64_t split_seed = 20210705, double val_fraction = 0.2);

/// The order training examples are visited in: epoch e = floor(i / n) is
/// a permutation of the training set seeded by (seed, e).
class ExampleOrder {
 public:
  ExampleOrder(int n_train, std::uint64_t seed) : n_(n_train), seed_(seed) {}
  /// Training-set index of global example i (i >= 0).
  int at(long long i);

 private:
  int n_;
  std::uint64_t seed_;
  long long epoch_ = -1;
  std::vector<int> perm_;
};

/// Fisher-Yates shuffle with std::mt19937_64 (the same on every platform).
void shuffle(std::vector<int>& v, std::uint64_t seed);

}  // namespace digits

#endif  // POLLUX_EXAMPLES_DATASET_H

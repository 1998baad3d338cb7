// Loading and ordering the digits dataset (see dataset.h).
#include "dataset.h"

#include <zlib.h>

#include <cstdlib>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace digits {

void shuffle(std::vector<int>& v, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

Dataset load_digits(const std::string& path, std::uint64_t split_seed, double val_fraction) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr)
    throw std::runtime_error(path + ": cannot open (install python3-sklearn, or pass --data PATH to a digits.csv.gz)");
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string gz_error = n < 0 ? msg : "";
  gzclose(f);
  if (!gz_error.empty()) throw std::runtime_error(path + ": " + gz_error);

  std::vector<float> x;
  std::vector<int> y;
  std::istringstream lines(text);
  std::string line;
  int lineno = 0;
  while (std::getline(lines, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::istringstream cells(line);
    std::string cell;
    int col = 0;
    while (std::getline(cells, cell, ',')) {
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      if (end == cell.c_str() || col > kFeatures)
        throw std::runtime_error(path + ":" + std::to_string(lineno) + ": expected 65 numbers");
      if (col < kFeatures) x.push_back(static_cast<float>(v / 16.0));
      else y.push_back(static_cast<int>(v));
      ++col;
    }
    if (col != kFeatures + 1 || y.back() < 0 || y.back() >= kClasses)
      throw std::runtime_error(path + ":" + std::to_string(lineno) + ": expected 64 pixels and a label in 0..9");
  }
  const int total = static_cast<int>(y.size());
  if (total < 100) throw std::runtime_error(path + ": only " + std::to_string(total) + " examples");

  std::vector<int> idx(static_cast<std::size_t>(total));
  std::iota(idx.begin(), idx.end(), 0);
  shuffle(idx, split_seed);
  const int n_val = static_cast<int>(total * val_fraction);
  Dataset d;
  for (int k = 0; k < total; ++k) {
    const int i = idx[static_cast<std::size_t>(k)];
    const bool val = k >= total - n_val;
    auto& dx = val ? d.val_x : d.train_x;
    dx.insert(dx.end(), x.begin() + static_cast<long>(i) * kFeatures, x.begin() + static_cast<long>(i + 1) * kFeatures);
    (val ? d.val_y : d.train_y).push_back(y[static_cast<std::size_t>(i)]);
  }
  return d;
}

int ExampleOrder::at(long long i) {
  const long long epoch = i / n_;
  if (epoch != epoch_) {
    perm_.resize(static_cast<std::size_t>(n_));
    std::iota(perm_.begin(), perm_.end(), 0);
    shuffle(perm_, seed_ * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(epoch));
    epoch_ = epoch;
  }
  return perm_[static_cast<std::size_t>(i % n_)];
}

}  // namespace digits

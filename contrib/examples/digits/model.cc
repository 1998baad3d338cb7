// Initialisation and parameter files (see model.h).
#include "model.h"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "pollux/atomic_file.h"

namespace digits {
namespace {

constexpr char kMagic[8] = {'P', 'O', 'L', 'X', 'M', 'L', 'P', '1'};

struct Header {
  char magic[8];
  std::uint32_t hidden;
  std::uint32_t crc;
  std::uint64_t count;
};

std::uint32_t crc_of(const std::vector<float>& p) {
  return static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(p.data()), static_cast<uInt>(p.size() * sizeof(float))));
}

}  // namespace

std::vector<float> init_params(const Layout& l, std::uint64_t seed) {
  std::vector<float> p(l.size(), 0.0f);
  std::mt19937_64 rng(seed);
  // Box-Muller on raw 53-bit uniforms: the same numbers with any libstdc++.
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
  auto normal = [&] { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); };
  const double s1 = std::sqrt(2.0 / 64), s2 = std::sqrt(2.0 / l.hidden);
  for (std::size_t i = l.w1(); i < l.b1(); ++i) p[i] = static_cast<float>(normal() * s1);
  for (std::size_t i = l.w2(); i < l.b2(); ++i) p[i] = static_cast<float>(normal() * s2);
  return p;
}

void save_params(const std::string& path, const Layout& l, const std::vector<float>& params) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.hidden = static_cast<std::uint32_t>(l.hidden);
  h.crc = crc_of(params);
  h.count = params.size();
  std::string data(reinterpret_cast<const char*>(&h), sizeof h);
  data.append(reinterpret_cast<const char*>(params.data()), params.size() * sizeof(float));
  if (std::string err = pollux::write_file_atomic(path, data); !err.empty()) throw std::runtime_error(err);
}

std::vector<float> load_params(const std::string& path, const Layout& l) {
  const pollux::FileRead f = pollux::read_file_checked(path, sizeof(Header) + l.size() * sizeof(float));
  if (!f) throw std::runtime_error(f.error);
  Header h{};
  if (f.data.size() < sizeof h) throw std::runtime_error(path + ": truncated");
  std::memcpy(&h, f.data.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw std::runtime_error(path + ": not a model file");
  if (h.hidden != static_cast<std::uint32_t>(l.hidden) || h.count != l.size())
    throw std::runtime_error(path + ": model of hidden size " + std::to_string(h.hidden) + ", expected " +
                             std::to_string(l.hidden));
  if (f.data.size() != sizeof h + h.count * sizeof(float)) throw std::runtime_error(path + ": truncated");
  std::vector<float> p(h.count);
  std::memcpy(p.data(), f.data.data() + sizeof h, h.count * sizeof(float));
  if (crc_of(p) != h.crc) throw std::runtime_error(path + ": CRC mismatch (corrupt)");
  return p;
}

}  // namespace digits

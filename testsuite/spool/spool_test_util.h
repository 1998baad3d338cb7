// Helpers of the spool and agent tests: hints (full_hint()'s values are
// referred to by text in hint_test.cc's rejection table: change both
// together), temporary directories, small files.
#ifndef POLLUX_SPOOL_TEST_UTIL_H
#define POLLUX_SPOOL_TEST_UTIL_H

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include "pollux/hint.h"

namespace pollux::test {

inline Hint minimal_hint() {
  Hint h;
  h.job_id = 4242;
  h.uid = 1000;
  h.timestamp = 1700000000.5;
  h.restart_count = 0;
  h.limits = BatchLimits{64, 1024, 8, 256, true};
  h.config = HintConfig{1, 2, 32, 0};
  return h;
}

inline Hint full_hint() {
  Hint h = minimal_hint();
  h.restart_count = 3;
  h.step = 1200;
  h.progress = 812.25;
  h.config = HintConfig{1, 4, 32, 1};
  h.perf = PerfParams{0.0125, 0.00025, 0.004, 0.0002, 0.002, 0.0001, 1.5, 0.011};
  h.grad = GradStats{0.0625, 3.5};
  h.max_profiled_replicas = 4;
  h.profile = {ProfileSample{1, 1, 32, 0.0375, 0.04}, ProfileSample{1, 2, 32, 0.0375, 0.041},
               ProfileSample{1, 4, 32, 0.038, 0.043}};
  h.checkpoint = HintCheckpoint{1200, 1700000000, true};
  h.resize_signal = 10;  // SIGUSR1
  h.restart_seconds = 42.5;
  return h;
}

/// full_hint() measured on an H100, with fits from two types it ran on
/// before (hint_test.cc's typed rejections refer to these values by text).
inline Hint typed_hint() {
  Hint h = full_hint();
  h.gpu_type = "nvidia_h100_80gb_hbm3";
  h.type_perf = {HintTypePerf{"a100", PerfParams{0.025, 0.0005, 0.004, 0.0002, 0.002, 0.0001, 1.25}},
                 HintTypePerf{"tesla_v100-sxm2-16gb", PerfParams{0.05, 0.001, 0.004, 0.0002, 0.002, 0.0001, 1.5, 0.02}}};
  return h;
}

/// A fresh private directory under $TMPDIR, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/pollux-test.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor: what cannot be removed stays
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace pollux::test

#endif  // POLLUX_SPOOL_TEST_UTIL_H

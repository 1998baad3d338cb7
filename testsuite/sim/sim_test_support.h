// Shared helpers of the simulator's tests: the shipped traces and small
// files written for a test.
#ifndef POLLUX_SIM_TEST_SUPPORT_H
#define POLLUX_SIM_TEST_SUPPORT_H

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "application.h"
#include "input_error.h"

namespace pollux::sim::test {

/// The shipped traces (sim/traces/pollux-osdi21/traces).
inline const std::string& traces_dir() {
  static const std::string dir = SIM_TRACES_ROOT "/traces";
  return dir;
}

inline std::string workloads_dir() { return SIM_TRACES_ROOT "/workloads"; }

/// One catalog for every test, with every application loaded.
inline const AppCatalog& catalog() {
  static AppCatalog* c = [] {
    auto* cat = new AppCatalog(traces_dir());
    for (const char* a : {"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}) cat->load(a);
    return cat;
  }();
  return *c;
}

/// A scratch directory for this test program, removed at exit.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/pollux-sim-test.XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    std::string s = d != nullptr ? d : "/tmp";
    static std::string keep = s;
    std::atexit([] { std::system(("rm -rf '" + keep + "'").c_str()); });
    return s;
  }();
  return dir;
}

/// Writes `text` to scratch_dir()/name and returns the path.
inline std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

/// What `f` throws as an InputError (the message users see), or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

/// The first numeric field of row `row` (0-based, after the header) of a CSV file.
inline std::vector<double> csv_row(const std::string& path, int row) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  for (int i = 0; i <= row; ++i) std::getline(in, line);
  std::vector<double> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.push_back(std::atof(line.substr(start, comma - start).c_str()));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace pollux::sim::test

#endif  // POLLUX_SIM_TEST_SUPPORT_H

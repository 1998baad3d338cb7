// Per-GPU-type profiles from Sia's artifact (see sia_artifact.h).
#include "sia_artifact.h"

#include <sys/stat.h>

#include <cmath>

#include "input_error.h"

namespace pollux::sim {
namespace {

// Samples per second on one GPU at the largest measured per-GPU batch.
double one_gpu_throughput(const Application& a) {
  const int m = a.max_local_bsz();
  return m / a.step_times({1}, m).step;
}

}  // namespace

SiaCalibration sia_calibration(const std::string& application) {
  if (application == "cifar10") return {1.8, 50, 30};
  if (application == "imagenet") return {1.2, 250, 250};
  if (application == "yolov3") return {1.2, 80, 45};
  if (application == "bert") return {1.2, 120, 120};
  if (application == "deepspeech2") return {1.2, 25, 25};
  if (application == "ncf") return {1.5, 15, 30};
  return {1.0, 30, 30};
}

std::string sia_traces_dir(const std::string& artifact) {
  const std::string dir = artifact + "/sia-simulator/traces";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(artifact, 0, "not an export of Sia's artifact: no sia-simulator/traces/ directory");
  return dir;
}

void attach_profiles(std::vector<GpuType>& types, const std::string& traces_dir, const std::set<std::string>& apps,
                     const AppCatalog& base, std::vector<std::unique_ptr<AppCatalog>>& owned) {
  for (GpuType& g : types) {
    if (g.profile.empty()) continue;
    owned.push_back(std::make_unique<AppCatalog>(traces_dir, g.profile));
    AppCatalog& c = *owned.back();
    double log_ratio = 0;
    for (const std::string& app : apps) {
      if (!c.has(app))
        throw InputError(traces_dir + "/" + app, 0, "no placements-" + g.profile + ".csv for GPU type " + g.name);
      log_ratio += std::log(one_gpu_throughput(c.load(app)) / one_gpu_throughput(base.get(app)));
    }
    g.apps = &c;
    if (!apps.empty() && g.speed_told) g.speed = std::exp(log_ratio / static_cast<double>(apps.size()));
  }
}

}  // namespace pollux::sim

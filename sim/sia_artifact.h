// Reading Sia's (SOSP'23) public artifact at run time (pollux-sim
// --sia-artifact DIR): its per-GPU-type step-time profiles of the Pollux
// applications, sia-simulator/traces/<app>/placements-<profile>.csv and
// scalability-<profile>.csv, become the step times of the GPU types whose
// `profile` column names them. The artifact carries no licence: it is read
// from where the user exported it, never shipped (doc/simulator.md).
#ifndef POLLUX_SIM_SIA_ARTIFACT_H
#define POLLUX_SIM_SIA_ARTIFACT_H

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "application.h"
#include "cluster_sim.h"

namespace pollux::sim {

/// What Sia's simulator does to every job, to match its physical testbed
/// (pollux-sim --sia-calibration): progress `slowdown` times slower than
/// the profiles say (simulator_config.py's SLOWDOWNS) and a re-allocation
/// stalling the job `restart_delay` seconds (applications.py's per-model
/// rescale_time), for the artifact at commit aaf7a0de.
struct SiaCalibration {
  double slowdown = 1.0;
  double restart_delay = 30.0;
  /// The penalty Sia's policy charges a restart of this model (sia.py's
  /// get_restart_penalty), used by --policy sia.
  double policy_penalty = 30.0;
};
SiaCalibration sia_calibration(const std::string& application);

/// `<artifact>/sia-simulator/traces`; InputError when it is not a directory.
std::string sia_traces_dir(const std::string& artifact);

/// For every type with a profile: loads `apps` from its profile files
/// (catalogs kept in `owned`), points GpuType::apps at them, and sets its
/// `speed` (what the type-aware scheduler is seeded with) to the geometric
/// mean over `apps` of its one-GPU throughput at the largest measured
/// per-GPU batch relative to `base`'s (the traces' own GPUs). InputError
/// when a profile is missing.
void attach_profiles(std::vector<GpuType>& types, const std::string& traces_dir, const std::set<std::string>& apps,
                     const AppCatalog& base, std::vector<std::unique_ptr<AppCatalog>>& owned);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_SIA_ARTIFACT_H

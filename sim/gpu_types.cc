// Reading a heterogeneous cluster description (see gpu_types.h).
#include "gpu_types.h"

#include <set>

#include "csv_reader.h"
#include "input_error.h"

namespace pollux::sim {

std::vector<GpuType> read_gpu_types(const std::string& path) {
  const CsvTable t = CsvTable::read(path, {"type", "nodes", "speed"});
  const int type = t.column("type"), nodes = t.column("nodes"), speed = t.column("speed");
  int gpn = -1, profile = -1;
  for (std::size_t c = 0; c < t.header().size(); ++c) {
    if (t.header()[c] == "gpus_per_node") gpn = static_cast<int>(c);
    if (t.header()[c] == "profile") profile = static_cast<int>(c);
  }
  // Every other column is an application's true speed.
  std::vector<std::pair<int, std::string>> apps;
  for (std::size_t c = 0; c < t.header().size(); ++c) {
    const int ci = static_cast<int>(c);
    if (ci != type && ci != nodes && ci != speed && ci != gpn && ci != profile) apps.emplace_back(ci, t.header()[c]);
  }
  std::vector<GpuType> out;
  std::set<std::string> names;
  for (const CsvTable::Row& r : t.rows()) {
    GpuType g;
    g.name = t.text(r, type);
    if (g.name.empty() || !names.insert(g.name).second) t.fail(r, "type '" + g.name + "' is empty or given twice");
    const long long n = t.integer(r, nodes);
    if (n < 1 || n > 1024) t.fail(r, "column nodes: " + std::to_string(n) + " not in [1, 1024]");
    g.nodes = static_cast<int>(n);
    if (gpn >= 0) {
      const long long k = t.integer(r, gpn);
      if (k < 0 || k > 64) t.fail(r, "column gpus_per_node: " + std::to_string(k) + " not in [0, 64]");
      g.gpus_per_node = static_cast<int>(k);
    }
    if (profile >= 0) {
      g.profile = t.text(r, profile);
      if (g.profile.find_first_of("/.") != std::string::npos) t.fail(r, "column profile: a name, not a path");
    }
    if (t.text(r, speed) == "-") {  // not told: the scheduler explores it
      g.speed = 1.0;
      g.speed_told = false;
    } else {
      g.speed = t.number(r, speed);
      if (!(g.speed > 0)) t.fail(r, "column speed: must be positive, or '-' (not told)");
    }
    for (const auto& [c, app] : apps) {
      const double v = t.number(r, c);
      if (!(v > 0)) t.fail(r, "column " + app + ": must be positive");
      g.app_speed[app] = v;
    }
    out.push_back(std::move(g));
  }
  if (out.empty()) throw InputError(path, 0, "no GPU type");
  return out;
}

}  // namespace pollux::sim

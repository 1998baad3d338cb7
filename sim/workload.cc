// Workload files (see workload.h).
#include "workload.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "application.h"
#include "csv_reader.h"
#include "input_error.h"

namespace pollux::sim {
namespace {

std::string base_name(const std::string& path) {
  std::string b = path.substr(path.find_last_of('/') + 1);
  if (b.size() > 4 && b.compare(b.size() - 4, 4, ".csv") == 0) b.resize(b.size() - 4);
  return b;
}

// "workload-10" sorts after "workload-9": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      const std::string na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
      const std::string ta = na.substr(std::min(na.find_first_not_of('0'), na.size()));
      const std::string tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

Workload read_workload(const std::string& path, const AppCatalog& catalog) {
  const CsvTable t = CsvTable::read(path, {"name", "time", "application", "num_replicas", "batch_size"});
  const int cn = t.column("name"), ct = t.column("time"), ca = t.column("application");
  const int cr = t.column("num_replicas"), cb = t.column("batch_size");
  Workload w;
  w.name = base_name(path);
  w.path = path;
  std::set<std::string> names;
  for (const CsvTable::Row& r : t.rows()) {
    WorkloadJob j;
    j.line = r.line;
    j.name = t.text(r, cn);
    if (j.name.empty()) t.fail(r, "empty job name");
    if (!names.insert(j.name).second) t.fail(r, "job name '" + j.name + "' appears twice");
    j.submit_time = t.number(r, ct);
    if (j.submit_time < 0) t.fail(r, "time must be >= 0");
    j.application = t.text(r, ca);
    if (!catalog.has(j.application))
      t.fail(r, "unknown application '" + j.application + "' (no " + j.application + "/placements.csv under " +
                    catalog.dir() + ")");
    const long long replicas = t.integer(r, cr);
    if (replicas < 1 || replicas > 1000000) t.fail(r, "num_replicas must be a positive GPU count");
    j.num_replicas = static_cast<int>(replicas);
    j.batch_size = t.integer(r, cb);
    if (j.batch_size < 1 || j.batch_size > 1000000000) t.fail(r, "batch_size must be in [1, 1000000000]");
    w.jobs.push_back(std::move(j));
  }
  if (w.jobs.empty()) throw InputError(path, 0, "no jobs");
  return w;
}

std::vector<std::string> expand_workload_paths(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    struct stat st {};
    if (::stat(a.c_str(), &st) != 0) throw InputError(a, 0, std::string("cannot open: ") + std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
      out.push_back(a);
      continue;
    }
    DIR* d = ::opendir(a.c_str());
    if (d == nullptr) throw InputError(a, 0, std::string("cannot open: ") + std::strerror(errno));
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n[0] != '.' && n.compare(n.size() - 4, 4, ".csv") == 0) names.push_back(n);
    }
    ::closedir(d);
    if (names.empty()) throw InputError(a, 0, "directory has no *.csv workload");
    std::sort(names.begin(), names.end(), natural_less);
    const std::string dir = a.back() == '/' ? a : a + "/";
    for (const std::string& n : names) out.push_back(dir + n);
  }
  return out;
}

}  // namespace pollux::sim

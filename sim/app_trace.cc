// Reading and checking an application's traces (see app_trace.h).
#include "app_trace.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "csv_reader.h"
#include "input_error.h"

namespace pollux::sim {
namespace {

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Step and sync times of one row: step > 0 and 0 <= sync < step. The
// simulator computes with local batch sizes as int: the range keeps every
// product of them with a GPU count within it.
StepSample read_times(const CsvTable& t, const CsvTable::Row& r, StepSample s) {
  const long long local_bsz = t.integer(r, t.column("local_bsz"));
  if (local_bsz < 1 || local_bsz > kMaxLocalBatch)
    t.fail(r, "local_bsz " + std::to_string(local_bsz) + " is out of range [1, " + std::to_string(kMaxLocalBatch) +
                  "]");
  s.local_bsz = static_cast<double>(local_bsz);
  s.step_time = t.number(r, t.column("step_time"));
  s.sync_time = t.number(r, t.column("sync_time"));
  if (!(s.step_time > 0)) t.fail(r, "step_time must be positive");
  if (!(s.sync_time >= 0 && s.sync_time < s.step_time))
    t.fail(r, "sync_time must be in [0, step_time)");
  return s;
}

void read_placements(const std::string& path, AppTrace& trace) {
  const CsvTable t = CsvTable::read(path, {"placement", "local_bsz", "step_time", "sync_time"});
  const int cp = t.column("placement");
  for (const CsvTable::Row& r : t.rows()) {
    const std::string id = t.text(r, cp);
    if (id.empty() || id.size() > 64 || id.find_first_not_of("123456789") != std::string::npos)
      t.fail(r, "placement '" + id + "' is not a string of per-node GPU counts 1-9");
    StepSample s;
    s.nodes = static_cast<int>(id.size());
    s.replicas = 0;
    for (char c : id) s.replicas += c - '0';
    trace.placements.push_back(PlacementSample{id, read_times(t, r, s)});
  }
}

void read_scalability(const std::string& path, AppTrace& trace) {
  const CsvTable t = CsvTable::read(path, {"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"});
  for (const CsvTable::Row& r : t.rows()) {
    StepSample s;
    const long long nodes = t.integer(r, t.column("num_nodes"));
    const long long replicas = t.integer(r, t.column("num_replicas"));
    if (nodes < 1 || nodes > 4096 || replicas < nodes || replicas > 65536)
      t.fail(r, "need 1 <= num_nodes <= num_replicas (and sane sizes)");
    s.nodes = static_cast<int>(nodes);
    s.replicas = static_cast<int>(replicas);
    trace.scalability.push_back(read_times(t, r, s));
  }
}

std::vector<EpochRecord> read_validation(const std::string& path) {
  const CsvTable t = CsvTable::read(path, {"progress", "iteration", "metric", "grad_sqr", "grad_var"});
  std::vector<EpochRecord> out;
  for (const CsvTable::Row& r : t.rows()) {
    EpochRecord e;
    e.progress = t.number(r, t.column("progress"));
    e.iteration = t.number(r, t.column("iteration"));
    e.metric = t.number(r, t.column("metric"));
    e.grad_sqr = t.number(r, t.column("grad_sqr"));
    e.grad_var = t.number(r, t.column("grad_var"));
    if (!(e.progress > 0) || (!out.empty() && e.progress < out.back().progress))
      t.fail(r, "progress must be positive and non-decreasing");
    if (e.iteration < 0 || (!out.empty() && e.iteration < out.back().iteration))
      t.fail(r, "iteration must be non-negative and non-decreasing");
    if (e.grad_sqr < 0 || e.grad_var < 0) t.fail(r, "grad_sqr and grad_var must be non-negative");
    out.push_back(e);
  }
  if (out.empty()) throw InputError(path, 0, "no epochs");
  return out;
}

}  // namespace

std::string trace_path(const std::string& traces_dir, const std::string& name, const std::string& file) {
  return traces_dir + "/" + name + "/" + file;
}

std::string profile_file(const std::string& base, const std::string& profile) {
  return profile.empty() ? base + ".csv" : base + "-" + profile + ".csv";
}

AppTrace read_app_trace(const std::string& traces_dir, const std::string& name, const std::string& profile) {
  AppTrace trace;
  trace.name = name;
  trace.dir = traces_dir + "/" + name;
  trace.placements_file = trace_path(traces_dir, name, profile_file("placements", profile));
  read_placements(trace.placements_file, trace);
  const std::string scal = trace_path(traces_dir, name, profile_file("scalability", profile));
  if (is_file(scal)) read_scalability(scal, trace);

  DIR* d = ::opendir(trace.dir.c_str());
  if (d == nullptr) throw InputError(trace.dir, 0, std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::string> files;
  while (const dirent* e = ::readdir(d)) files.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(files.begin(), files.end());
  const std::string prefix = "validation-", suffix = ".csv";
  for (const std::string& f : files) {
    if (f.size() <= prefix.size() + suffix.size() || f.compare(0, prefix.size(), prefix) != 0 ||
        f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = f.substr(prefix.size(), f.size() - prefix.size() - suffix.size());
    const std::string path = trace.dir + "/" + f;
    if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(digits) < 1)
      throw InputError(path, 0, "name must be validation-<batch size>.csv with a positive batch size");
    trace.validation[std::stoll(digits)] = read_validation(path);
  }
  if (trace.validation.empty()) throw InputError(trace.dir, 0, "no validation-<batch size>.csv files");
  if (trace.placements.empty())
    throw InputError(trace.placements_file, 0, "no rows");
  return trace;
}

}  // namespace pollux::sim

// A site's job history from sacct (see sacct.h).
#include "sacct.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "application.h"
#include "input_error.h"

namespace pollux::sim {
namespace {

constexpr const char* kRequired[] = {"JobID", "JobName", "Comment", "Submit",  "Start",    "End",
                                     "State", "Timelimit", "NNodes", "ReqTRES", "AllocTRES"};

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = line.find(sep, start);
    out.push_back(line.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// A whole non-negative decimal number, or -1.
long long whole(std::string_view s) {
  if (s.empty() || s.size() > 15) return -1;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// The GPU count of a TRES list ("billing=2,cpu=2,gres/gpu=2,node=1"): the
// untyped gres/gpu entry; -1 when there is none; -2 when it is not a count.
long long tres_gpus(const std::string& tres) {
  for (const std::string& item : split(tres, ',')) {
    if (item.rfind("gres/gpu=", 0) != 0) continue;
    const long long n = whole(std::string_view(item).substr(9));
    return n < 0 ? -2 : n;
  }
  return -1;
}

}  // namespace

double parse_slurm_duration(const std::string& text) {
  if (text == "UNLIMITED" || text == "Partition_Limit") return 0;
  std::string_view s = text;
  long long days = 0;
  if (const std::size_t dash = s.find('-'); dash != std::string_view::npos) {
    days = whole(s.substr(0, dash));
    if (days < 0) return -1;
    s.remove_prefix(dash + 1);
  }
  std::vector<long long> parts;
  for (const std::string& p : split(std::string(s), ':')) {
    parts.push_back(p.size() == 2 ? whole(p) : -1);
    if (parts.back() < 0 || (parts.size() > 1 && parts.back() > 59)) return -1;
  }
  // sacct prints MM:SS below an hour, HH:MM:SS above, D-HH:MM:SS above a day.
  if (parts.size() == 2 && days == 0) return static_cast<double>(parts[0] * 60 + parts[1]);
  if (parts.size() == 3 && (days == 0 || parts[0] < 24))
    return static_cast<double>(days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]);
  return -1;
}

double parse_slurm_time(const std::string& text) {
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0' || text.size() != 19) return std::nan("");
  tm.tm_isdst = -1;  // sacct prints the local time
  const std::time_t t = std::mktime(&tm);
  return t == static_cast<std::time_t>(-1) ? std::nan("") : static_cast<double>(t);
}

Workload read_sacct(const std::string& path, AppCatalog& catalog, double time_scale, SacctSummary* summary) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  SacctSummary sum;
  Workload w;
  w.path = path;
  w.name = path.substr(path.find_last_of('/') + 1);
  if (const std::size_t dot = w.name.rfind('.'); dot != std::string::npos && dot > 0) w.name.resize(dot);
  std::vector<std::string> header;
  std::map<std::string, std::size_t> col;
  std::vector<double> submits;
  std::set<std::string> ids;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line, '|');
    if (header.empty()) {
      header = f;
      for (std::size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      for (const char* name : kRequired)
        if (col.count(name) == 0)
          throw InputError(path, lineno,
                           std::string("header has no field '") + name +
                               "' (not sacct --parsable2 --allocations --format=...: doc/simulator.md)");
      continue;
    }
    const auto fail = [&](const std::string& what) { throw InputError(path, lineno, what); };
    if (f.size() != header.size())
      fail("expected " + std::to_string(header.size()) + " '|'-separated fields, found " + std::to_string(f.size()));
    const auto field = [&](const char* name) -> const std::string& { return f[col.at(name)]; };
    const std::string& id = field("JobID");
    if (id.empty()) fail("empty JobID");
    if (id.find('.') != std::string::npos) {  // JOBID.batch, JOBID.extern, JOBID.0: a step
      ++sum.steps;
      continue;
    }
    const std::string& state = field("State");
    const std::string word = state.substr(0, state.find(' '));  // "CANCELLED by 0"
    if (word.empty() || word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != std::string::npos)
      fail("State '" + state + "' is not a job state");
    const auto time_of = [&](const char* name) {
      const double t = parse_slurm_time(field(name));
      if (std::isnan(t)) fail(std::string(name) + " '" + field(name) + "' is not a time (YYYY-MM-DDTHH:MM:SS)");
      return t;
    };
    const double submit = time_of("Submit");
    if (field("Start") == "Unknown" || field("Start") == "None") {
      ++sum.not_started;
      continue;
    }
    const double start = time_of("Start");
    if (field("End") == "Unknown" || field("End") == "None") {
      ++sum.not_ended;
      continue;
    }
    const double end = time_of("End");
    if (start < submit || end < start) fail("impossible times: Submit <= Start <= End does not hold");
    const long long nodes = whole(field("NNodes"));
    if (nodes < 1 || nodes > 1000000) fail("impossible size: NNodes '" + field("NNodes") + "'");
    long long gpus = tres_gpus(field("AllocTRES"));
    if (gpus == -1) gpus = tres_gpus(field("ReqTRES"));
    if (gpus == -2 || gpus > 1000000) fail("impossible size: gres/gpu in '" + field("AllocTRES") + "' / '" + field("ReqTRES") + "'");
    if (gpus <= 0) {
      ++sum.no_gpus;
      continue;
    }
    const double limit = parse_slurm_duration(field("Timelimit"));
    if (limit < 0) fail("Timelimit '" + field("Timelimit") + "' is not [D-]HH:MM:SS, MM:SS, UNLIMITED or Partition_Limit");
    if (!ids.insert(id).second) fail("JobID " + id + " appears twice (give sacct --allocations, not --duplicates)");

    WorkloadJob j;
    j.line = lineno;
    j.name = id;
    j.num_replicas = static_cast<int>(gpus);
    j.time_limit = limit * time_scale;
    // The application: the comment's pollux-app=APP, else the job name.
    std::string batch, epochs;
    for (std::string token : split(field("Comment"), ' '))
      for (const std::string& t : split(token, ',')) {
        if (t.rfind("pollux-app=", 0) == 0) {
          j.application = t.substr(11);
          if (!catalog.has(j.application))
            fail("unknown application '" + j.application + "' in the Comment (no " + j.application +
                 "/placements.csv under " + catalog.dir() + ")");
        }
        if (t.rfind("pollux-batch=", 0) == 0) batch = t.substr(13);
        if (t.rfind("pollux-epochs=", 0) == 0) epochs = t.substr(14);
      }
    if (j.application.empty() && !field("JobName").empty() && field("JobName").find('/') == std::string::npos &&
        catalog.has(field("JobName")))
      j.application = field("JobName");
    if (!j.application.empty()) {
      const Application& app = catalog.load(j.application);
      j.batch_size = batch.empty() ? std::llround(app.init_batch()) : whole(batch);
      if (j.batch_size < 1 || j.batch_size > 1000000000) fail("pollux-batch '" + batch + "' is not in [1, 1000000000]");
      const long long last = epochs.empty() ? 0 : whole(epochs);
      if (last < (epochs.empty() ? 0 : 1) || last > app.max_epochs())
        fail("pollux-epochs '" + epochs + "' is not in [1, " + std::to_string(app.max_epochs()) + "] (" +
             j.application + "'s training)");
      j.last_epoch = static_cast<int>(last);
      ++sum.modelled;
    } else {
      j.recorded = true;
      j.duration = (end - start) * time_scale;
      ++sum.recorded;
    }
    submits.push_back(submit);
    w.jobs.push_back(std::move(j));
  }
  if (in.bad()) throw InputError(path, 0, "read error");
  if (header.empty()) throw InputError(path, 0, "empty file (no header line)");
  if (w.jobs.empty()) throw InputError(path, 0, "no job that used GPUs, started and ended");
  double first = submits[0];
  for (double s : submits) first = std::min(first, s);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) w.jobs[i].submit_time = (submits[i] - first) * time_scale;
  if (summary != nullptr) *summary = sum;
  return w;
}

}  // namespace pollux::sim

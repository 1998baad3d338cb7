// Table and JSON output (see report.h).
#include "report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "pollux/policies.h"

namespace pollux::sim {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

const char* search_name(SearchKind k) { return k == SearchKind::kGenetic ? "genetic" : "local"; }

// A type's node size: its own, or the cluster's --gpus-per-node.
// The policy runs jobs with time limits (Slurm's backfill): the report
// gives the factor and each job's limit.
bool has_time_limits(const SimOptions& o) {
  const PolicyEntry* e = find_policy(o.policy);
  return e != nullptr && e->input == JobInput::kRigidTimeLimit;
}

int node_gpus(const GpuType& g, const SimOptions& o) { return g.gpus_per_node > 0 ? g.gpus_per_node : o.gpus_per_node; }

}  // namespace

double mean_avg_jct(const std::vector<RunResult>& runs) {
  if (runs.empty()) return 0;
  double sum = 0;
  for (const RunResult& r : runs) sum += r.avg_jct;
  return sum / static_cast<double>(runs.size());
}

int total_gpus(const SimOptions& o) {
  if (o.gpu_types.empty()) return o.nodes * o.gpus_per_node;
  int gpus = 0;
  for (const GpuType& g : o.gpu_types) gpus += g.nodes * node_gpus(g, o);
  return gpus;
}

std::string cluster_size(const SimOptions& o) {
  // Node sizes may differ by GPU type: then the totals (the types apart).
  return o.gpu_types.empty() ? std::to_string(o.nodes) + " nodes x " + std::to_string(o.gpus_per_node) + " GPUs"
                             : std::to_string(o.nodes) + " nodes, " + std::to_string(total_gpus(o)) + " GPUs";
}

void print_table(std::ostream& out, const SimOptions& o, const std::vector<RunResult>& runs) {
  char line[256];
  const std::string size = cluster_size(o);
  std::snprintf(line, sizeof line, "policy %s, %s, interval %g s, interference %g, p = %g\n", o.policy.c_str(),
                size.c_str(), o.interval, o.interference, o.policy_options.fairness_p);
  out << line;
  if (!o.gpu_types.empty()) {
    out << "GPU types:";
    for (const GpuType& g : o.gpu_types) {
      const std::string speed = g.speed_told ? json_number(g.speed) : std::string("not told");
      std::snprintf(line, sizeof line, "%s %s %d nodes x %d GPUs (speed %s%s%s)", &g == &o.gpu_types.front() ? "" : ",",
                    g.name.c_str(), g.nodes, node_gpus(g, o), speed.c_str(),
                    g.apps != nullptr ? ", Sia's profile " : "", g.apps != nullptr ? g.profile.c_str() : "");
      out << line;
    }
    // Only a policy that may be either says which it is.
    const PolicyEntry* policy = find_policy(o.policy);
    out << (policy == nullptr || policy->types != GpuTypeUse::kAware ? "\n"
            : o.type_aware                                         ? "; type-aware\n"
                                                                   : "; type-agnostic\n");
  }
  std::snprintf(line, sizeof line, "%-20s %5s %12s %12s %13s %10s %13s\n", "workload", "jobs", "avg JCT (s)",
                "p99 JCT (s)", "makespan (s)", "GPU-hours", "restarts/job");
  out << line;
  for (const RunResult& r : runs) {
    std::snprintf(line, sizeof line, "%-20s %5zu %12.1f %12.1f %13.0f %10.1f %13.2f\n", r.workload.c_str(),
                  r.jobs.size(), r.avg_jct, r.p99_jct, r.makespan, r.gpu_hours, r.restarts_per_job);
    out << line;
  }
  if (o.autoscale.mode != ScaleMode::kOff) {
    double hours = 0, cost = 0;
    for (const RunResult& r : runs) {
      hours += r.node_hours;
      cost += r.cost;
    }
    std::snprintf(line, sizeof line, "auto-scaling %s (boot %g s%s): %.1f node-hours, cost %.2f\n",
                  scale_mode_name(o.autoscale.mode), o.autoscale.boot_delay,
                  o.autoscale.mode == ScaleMode::kQueue ? (", suspend " + json_number(o.autoscale.suspend_time) + " s").c_str()
                                                        : "",
                  hours, cost);
    out << line;
  }
  std::snprintf(line, sizeof line, "mean of average JCTs: %.1f s (%zu workload%s)\n", mean_avg_jct(runs),
                runs.size(), runs.size() == 1 ? "" : "s");
  out << line;
}

std::string to_json(const SimOptions& o, const std::string& traces_dir, const std::vector<RunResult>& runs) {
  std::ostringstream j;
  const PolicyOptions& p = o.policy_options;
  j << "{\n  \"policy\": " << json_string(o.policy) << ",\n";
  j << "  \"config\": {\"nodes\": " << o.nodes << ", \"gpus_per_node\": " << o.gpus_per_node
    << ", \"interval\": " << json_number(o.interval) << ", \"interference\": " << json_number(o.interference)
    << ", \"restart_delay\": " << json_number(o.restart_delay) << ", \"fairness_p\": " << json_number(p.fairness_p)
    << ", \"seed\": " << p.seed << ", \"search\": " << json_string(search_name(p.search))
    << ", \"uniform_gpus\": " << (p.uniform_gpus_per_node ? "true" : "false")
    << ", \"interference_avoidance\": " << (p.interference_avoidance ? "true" : "false")
    << ", \"traces\": " << json_string(traces_dir);
  if (o.restart_penalty >= 0) j << ", \"restart_penalty\": " << json_number(o.restart_penalty);
  if (o.start_delay >= 0) j << ", \"start_delay\": " << json_number(o.start_delay);
  if (o.end_delay > 0) j << ", \"end_delay\": " << json_number(o.end_delay);
  if (has_time_limits(o)) j << ", \"time_limit_factor\": " << json_number(o.time_limit_factor);
  if (!o.gpu_types.empty()) {
    j << ", \"gpus\": " << total_gpus(o) << ", \"type_aware\": " << (o.type_aware ? "true" : "false")
      << ", \"gpu_types\": [";
    for (const GpuType& g : o.gpu_types)
      j << (&g == &o.gpu_types.front() ? "" : ", ") << "{\"name\": " << json_string(g.name)
        << ", \"nodes\": " << g.nodes << ", \"gpus_per_node\": " << node_gpus(g, o)
        << ", \"speed\": " << (g.speed_told ? json_number(g.speed) : std::string("null")) << "}";
    j << "]";
  }
  if (o.autoscale.mode != ScaleMode::kOff) {
    const AutoscaleOptions& a = o.autoscale;
    j << ", \"autoscale\": {\"mode\": " << json_string(scale_mode_name(a.mode))
      << ", \"boot_delay\": " << json_number(a.boot_delay) << ", \"node_price\": " << json_number(a.node_price)
      << ", \"suspend_time\": " << json_number(a.suspend_time) << ", \"min_utility\": " << json_number(a.band.min)
      << ", \"max_utility\": " << json_number(a.band.max) << "}";
  }
  j << "},\n";
  j << "  \"workloads\": {";
  for (std::size_t w = 0; w < runs.size(); ++w) {
    const RunResult& r = runs[w];
    j << (w ? ",\n" : "\n") << "    " << json_string(r.workload) << ": {\"avg_jct\": " << json_number(r.avg_jct)
      << ", \"p99_jct\": " << json_number(r.p99_jct) << ", \"makespan\": " << json_number(r.makespan)
      << ", \"gpu_hours\": " << json_number(r.gpu_hours)
      << ", \"restarts_per_job\": " << json_number(r.restarts_per_job);
    if (o.autoscale.mode != ScaleMode::kOff) {
      // Per full round: time, nodes paid, nodes up, utility (null: not known to the policy).
      j << ", \"node_hours\": " << json_number(r.node_hours) << ", \"cost\": " << json_number(r.cost)
        << ",\n      \"scale\": {\"times\": [";
      for (std::size_t i = 0; i < r.scale_times.size(); ++i) j << (i ? ", " : "") << json_number(r.scale_times[i]);
      j << "], \"nodes_on\": [";
      for (std::size_t i = 0; i < r.nodes_on.size(); ++i) j << (i ? ", " : "") << r.nodes_on[i];
      j << "], \"nodes_up\": [";
      for (std::size_t i = 0; i < r.nodes_up.size(); ++i) j << (i ? ", " : "") << r.nodes_up[i];
      j << "], \"utility\": [";
      for (std::size_t i = 0; i < r.utility.size(); ++i)
        j << (i ? ", " : "") << (r.utility[i] < 0 ? std::string("null") : json_number(r.utility[i]));
      j << "]}";
    }
    j << ",\n      \"jcts\": {";
    for (std::size_t i = 0; i < r.jobs.size(); ++i)
      j << (i ? ", " : "") << json_string(r.jobs[i].name) << ": " << json_number(r.jobs[i].jct);
    j << "},\n      \"restarts\": {";
    for (std::size_t i = 0; i < r.jobs.size(); ++i)
      j << (i ? ", " : "") << json_string(r.jobs[i].name) << ": " << r.jobs[i].restarts;
    j << "},\n      \"applications\": {";
    for (std::size_t i = 0; i < r.jobs.size(); ++i)
      j << (i ? ", " : "") << json_string(r.jobs[i].name) << ": " << json_string(r.jobs[i].application);
    if (has_time_limits(o)) {  // the time limits it derived (Slurm's --time, seconds)
      j << "},\n      \"time_limits\": {";
      for (std::size_t i = 0; i < r.jobs.size(); ++i)
        j << (i ? ", " : "") << json_string(r.jobs[i].name) << ": " << json_number(r.jobs[i].time_limit);
    }
    j << "}}";
  }
  j << "\n  },\n  \"mean_avg_jct\": " << json_number(mean_avg_jct(runs)) << "\n}\n";
  return j.str();
}

std::string parent_directory(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::optional<std::string> directory_write_problem(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return "directory " + dir + " does not exist";
    return "cannot use directory " + dir + ": " + std::strerror(errno);
  }
  if (!S_ISDIR(st.st_mode)) return dir + " is not a directory";
  std::string probe = dir + "/.pollux-sim-probe-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return "cannot write in directory " + dir + ": " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

std::optional<std::string> output_file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + " is a directory";
  return directory_write_problem(parent_directory(path));
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot write: " + err);
  }
}

}  // namespace pollux::sim

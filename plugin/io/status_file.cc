// SPDX-License-Identifier: GPL-2.0-or-later
// The status file and the metrics file (see status_file.h).
#include "status_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace pollux::sched {
namespace {

// A finite number as JSON and Prometheus both read it (neither has to
// meet NaN or infinity from a model).
std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);  // Unix times keep their fraction
  return buf;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json_counts(const std::map<std::string, long long>& m) {
  std::string out = "{";
  for (const auto& [k, v] : m) out += (out.size() > 1 ? ", " : "") + json_string(k) + ": " + std::to_string(v);
  return out + "}";
}

std::string json_totals(const RoundTotals& t) {
  std::ostringstream o;
  o << "{\"since\": " << num(t.since) << ", \"rounds\": " << json_counts(t.rounds) << ", \"phases\": {";
  bool first = true;
  for (const auto& [name, p] : t.phases) {
    o << (first ? "" : ", ") << json_string(name) << ": {\"count\": " << p.count << ", \"last_ms\": " << num(p.last_ms)
      << ", \"mean_ms\": " << num(p.mean_ms()) << ", \"max_ms\": " << num(p.max_ms) << "}";
    first = false;
  }
  o << "}, \"jobs_considered\": " << t.jobs_considered << ", \"decisions\": " << json_counts(t.decisions)
    << ", \"reasons\": " << json_counts(t.reasons) << ", \"refused_sizes\": " << t.refused_sizes
    << ", \"enact_errors\": " << t.enact_errors << ", \"hints_rejected\": " << json_counts(t.hints_rejected)
    << ", \"checkpoint_acks\": " << t.checkpoint_acks << ", \"checkpoint_timeouts\": " << t.checkpoint_timeouts
    << ", \"nodes_powered_down\": " << t.nodes_powered_down << ", \"nodes_powered_up\": " << t.nodes_powered_up
    << "}";
  return o.str();
}

std::string json_gpus(const GpuUse& g) {
  return "{\"total\": " + std::to_string(g.total) + ", \"elastic\": " + std::to_string(g.elastic) +
         ", \"moldable\": " + std::to_string(g.moldable) + ", \"rigid\": " + std::to_string(g.rigid) +
         ", \"suspended\": " + std::to_string(g.suspended) + ", \"idle\": " + std::to_string(g.idle) +
         ", \"powered_down\": " + std::to_string(g.powered_down) + ", \"booting\": " + std::to_string(g.booting) + "}";
}

// Prometheus label values: backslash, double quote and newline escaped.
std::string label(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

class Prom {
 public:
  void family(const char* name, const char* type, const char* help) {
    o_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  }
  void sample(std::string_view name, const std::string& labels, double v) {
    o_ << name << (labels.empty() ? "" : "{" + labels + "}") << ' ' << num(v) << '\n';
  }
  void counts(const char* name, const char* help, const char* key, const std::map<std::string, long long>& m) {
    family(name, "counter", help);
    for (const auto& [k, v] : m) sample(name, std::string(key) + "=" + label(k), static_cast<double>(v));
  }
  // One sample per holder kind; `labels` precede kind= (empty, or ending in a comma).
  void gpus(std::string_view name, const std::string& labels, const GpuUse& g) {
    sample(name, labels + "kind=\"elastic\"", g.elastic);
    sample(name, labels + "kind=\"moldable\"", g.moldable);
    sample(name, labels + "kind=\"rigid\"", g.rigid);
    sample(name, labels + "kind=\"suspended\"", g.suspended);
    sample(name, labels + "kind=\"idle\"", g.idle);
  }
  std::string str() const { return o_.str(); }

 private:
  std::ostringstream o_;
};

}  // namespace

std::string status_json(const RoundStats& s, double now) {
  std::ostringstream o;
  const GpuUse& g = s.gpus();
  o << "{\"version\": " << kStatusVersion << ", \"written\": " << num(now) << ", \"last_round\": "
    << num(s.last_round()) << ",\n \"since_start\": " << json_totals(s.since_start())
    << ",\n \"since_reset\": " << json_totals(s.since_reset()) << ",\n \"gpus\": " << json_gpus(g);
  // Only on a cluster of two or more GPU types: others' files stay as they were.
  if (!s.gpus_by_type().empty()) {
    o << ", \"gpus_by_type\": {";
    bool first_type = true;
    for (const TypeGpuUse& t : s.gpus_by_type()) {
      o << (first_type ? "" : ", ") << json_string(t.type) << ": " << json_gpus(t.use);
      first_type = false;
    }
    o << "}";
  }
  // Only with goodput auto-scaling on (pollux_autoscale=goodput).
  if (const AutoscalePlan& a = s.autoscale(); a.active)
    o << ",\n \"autoscale\": {\"target\": " << a.target << ", \"on\": " << a.paid << ", \"utility\": " << num(a.utility)
      << ", \"why\": " << json_string(a.why) << "}";
  const SpoolSpace& sp = s.spool();
  o << ", \"cluster_goodput\": " << num(s.cluster_goodput()) << ",\n \"spool\": {\"dir\": " << json_string(s.spool_dir())
    << ", \"known\": " << (sp.known ? "true" : "false") << ", \"full\": " << (sp.full ? "true" : "false")
    << ", \"free_bytes\": " << sp.free_bytes << ", \"free_inodes\": ";
  if (sp.inodes_counted) o << sp.free_inodes;
  else o << "null";
  o << ", \"error\": " << json_string(sp.error) << "},\n \"jobs\": [";
  const bool typed = !s.gpus_by_type().empty();
  bool first = true;
  for (const JobRow& r : s.jobs()) {
    o << (first ? "\n  " : ",\n  ") << "{\"job_id\": " << r.job_id << ", \"user\": " << json_string(r.user)
      << ", \"partition\": " << json_string(r.partition) << ", \"phase\": " << json_string(r.phase)
      << ", \"why\": " << json_string(r.why) << ", \"cap\": " << json_string(r.cap) << ", \"action\": " << json_string(r.action) << ", \"gpus\": " << r.gpus
      << ", \"nodes\": " << r.nodes << ", \"batch\": " << r.batch << ", \"goodput\": " << num(r.goodput)
      << ", \"efficiency\": " << num(r.efficiency) << ", \"speedup\": " << num(r.speedup)
      << ", \"has_model\": " << (r.has_model ? "true" : "false") << ", \"running\": " << (r.running ? "true" : "false")
      << ", \"restarts\": " << r.restarts;
    if (typed) o << ", \"gpu_type\": " << json_string(r.gpu_type);
    o << "}";
    first = false;
  }
  o << "]}\n";
  return o.str();
}

std::string metrics_text(const RoundStats& s) {
  const RoundTotals& t = s.since_start();
  Prom p;
  p.family("pollux_start_time_seconds", "gauge", "Unix time sched/pollux started counting (slurmctld's start).");
  p.sample("pollux_start_time_seconds", "", t.since);
  p.family("pollux_last_round_timestamp_seconds", "gauge", "Unix time of the last round's snapshot.");
  p.sample("pollux_last_round_timestamp_seconds", "", s.last_round());
  p.counts("pollux_rounds_total", "Scheduling rounds by kind.", "kind", t.rounds);
  p.family("pollux_round_phase_seconds", "summary",
           "Duration of each phase of a round: snapshot and enact are slurmctld lock holds.");
  for (const auto& [name, ph] : t.phases) {
    p.sample("pollux_round_phase_seconds_sum", "phase=" + label(name), ph.sum_ms / 1000);
    p.sample("pollux_round_phase_seconds_count", "phase=" + label(name), static_cast<double>(ph.count));
  }
  p.family("pollux_round_phase_last_seconds", "gauge", "Duration of each phase in the last round that had it.");
  for (const auto& [name, ph] : t.phases) p.sample("pollux_round_phase_last_seconds", "phase=" + label(name), ph.last_ms / 1000);
  p.family("pollux_round_phase_max_seconds", "gauge", "Longest duration of each phase since slurmctld started.");
  for (const auto& [name, ph] : t.phases) p.sample("pollux_round_phase_max_seconds", "phase=" + label(name), ph.max_ms / 1000);
  p.family("pollux_jobs_considered_total", "counter", "Elastic jobs in the rounds' snapshots, summed over rounds.");
  p.sample("pollux_jobs_considered_total", "", static_cast<double>(t.jobs_considered));
  p.counts("pollux_decisions_total", "Decisions that changed something in Slurm, by kind.", "kind", t.decisions);
  p.counts("pollux_decision_reasons_total", "The same decisions by the job's why.", "reason", t.reasons);
  p.family("pollux_refused_sizes_total", "counter", "Sizes Slurm refused after sched/pollux set them.");
  p.sample("pollux_refused_sizes_total", "", static_cast<double>(t.refused_sizes));
  p.family("pollux_enact_errors_total", "counter", "Errors applying decisions to Slurm's jobs.");
  p.sample("pollux_enact_errors_total", "", static_cast<double>(t.enact_errors));
  p.counts("pollux_hints_rejected_total", "Hint files rejected, by reason.", "reason", t.hints_rejected);
  p.family("pollux_checkpoint_acks_total", "counter", "Resizes requeued on the agent's checkpoint acknowledgement.");
  p.sample("pollux_checkpoint_acks_total", "", static_cast<double>(t.checkpoint_acks));
  p.family("pollux_checkpoint_timeouts_total", "counter", "Resizes requeued at the checkpoint time-out.");
  p.sample("pollux_checkpoint_timeouts_total", "", static_cast<double>(t.checkpoint_timeouts));
  const GpuUse& g = s.gpus();
  p.family("pollux_gpus", "gauge", "GPUs of the GPU nodes by who holds them, at the last round.");
  p.gpus("pollux_gpus", "", g);
  p.family("pollux_nodes_powered_down_total", "counter",
           "Nodes powered down by goodput auto-scaling (pollux_autoscale=goodput).");
  p.sample("pollux_nodes_powered_down_total", "", static_cast<double>(t.nodes_powered_down));
  p.family("pollux_nodes_powered_up_total", "counter",
           "Nodes resumed ahead of need by goodput auto-scaling (pollux_autoscale=goodput).");
  p.sample("pollux_nodes_powered_up_total", "", static_cast<double>(t.nodes_powered_up));
  if (const AutoscalePlan& a = s.autoscale(); a.active) {
    p.family("pollux_autoscale_nodes", "gauge",
             "Goodput auto-scaling at the last periodic round: the nodes worth running (target) and those on or "
             "booting (on).");
    p.sample("pollux_autoscale_nodes", "state=\"target\"", a.target);
    p.sample("pollux_autoscale_nodes", "state=\"on\"", a.paid);
    p.family("pollux_autoscale_utility", "gauge",
             "The cluster utility goodput auto-scaling keeps in pollux_utility_band, at the last periodic round.");
    p.sample("pollux_autoscale_utility", "", a.utility);
  }
  p.family("pollux_gpus_power", "gauge",
           "GPUs of GPU nodes powered down or booting (Slurm's power saving), at the last round: a part of pollux_gpus.");
  p.sample("pollux_gpus_power", "state=\"powered_down\"", g.powered_down);
  p.sample("pollux_gpus_power", "state=\"booting\"", g.booting);
  p.family("pollux_cluster_gpus", "gauge", "GPUs of the GPU nodes.");
  p.sample("pollux_cluster_gpus", "", g.total);
  // Only on a cluster of two or more GPU types: others' files stay as they were.
  const bool typed = !s.gpus_by_type().empty();
  if (typed) {
    p.family("pollux_gpus_by_type", "gauge", "GPUs of each GPU type's nodes by who holds them, at the last round.");
    for (const TypeGpuUse& t : s.gpus_by_type()) p.gpus("pollux_gpus_by_type", "gpu_type=" + label(t.type) + ",", t.use);
    p.family("pollux_cluster_gpus_by_type", "gauge", "GPUs of each GPU type's nodes.");
    for (const TypeGpuUse& t : s.gpus_by_type()) p.sample("pollux_cluster_gpus_by_type", "gpu_type=" + label(t.type), t.use.total);
  }
  p.family("pollux_cluster_goodput", "gauge", "Sum of the running elastic jobs' goodput (examples per second).");
  p.sample("pollux_cluster_goodput", "", s.cluster_goodput());
  // The spool: 1 when agents cannot write their hints (spool_space.h).
  const SpoolSpace& sp = s.spool();
  p.family("pollux_spool_full", "gauge",
           "1 when the spool (pollux_spool_dir) is full or cannot be examined: agents cannot write their hints.");
  p.sample("pollux_spool_full", "", sp.full || !sp.known ? 1 : 0);
  p.family("pollux_spool_free_bytes", "gauge", "Bytes free to the agents in the spool's file system.");
  p.sample("pollux_spool_free_bytes", "", static_cast<double>(sp.free_bytes));
  if (sp.inodes_counted) {
    p.family("pollux_spool_free_inodes", "gauge", "Inodes free to the agents in the spool's file system.");
    p.sample("pollux_spool_free_inodes", "", static_cast<double>(sp.free_inodes));
  }
  struct Gauge {
    const char* name;
    const char* help;
    double (*value)(const JobRow&);
  };
  static const Gauge gauges[] = {
      {"pollux_job_gpus", "GPUs of the elastic job (decided, or current while running).",
       [](const JobRow& r) { return static_cast<double>(r.gpus); }},
      {"pollux_job_nodes", "Nodes of the elastic job.", [](const JobRow& r) { return static_cast<double>(r.nodes); }},
      {"pollux_job_batch_size", "Total batch size at that size.",
       [](const JobRow& r) { return static_cast<double>(r.batch); }},
      {"pollux_job_goodput", "Goodput at that size (examples per second).", [](const JobRow& r) { return r.goodput; }},
      {"pollux_job_efficiency", "Statistical efficiency at that batch size.",
       [](const JobRow& r) { return r.efficiency; }},
      {"pollux_job_speedup", "Speedup over one GPU.", [](const JobRow& r) { return r.speedup; }},
      {"pollux_job_restarts", "Slurm's restart count of the job.",
       [](const JobRow& r) { return static_cast<double>(r.restarts); }},
      {"pollux_job_restart_seconds",
       "Seconds a restart costs the job as its agent measured it (0: not reported, pollux_restart_penalty used).",
       [](const JobRow& r) { return r.restart_seconds; }},
  };
  auto job_labels = [typed](const JobRow& r) {
    return "job_id=" + label(std::to_string(r.job_id)) + ",user=" + label(r.user) + ",partition=" + label(r.partition) +
           (typed ? ",gpu_type=" + label(r.gpu_type) : "");
  };
  for (const Gauge& gauge : gauges) {
    p.family(gauge.name, "gauge", gauge.help);
    for (const JobRow& r : s.jobs()) p.sample(gauge.name, job_labels(r), gauge.value(r));
  }
  p.family("pollux_job_info", "gauge",
           "1 per elastic job: its phase, its last decision or why it has no GPUs, and what keeps it from growing.");
  for (const JobRow& r : s.jobs())
    p.sample("pollux_job_info", job_labels(r) + ",phase=" + label(r.phase) + ",why=" + label(r.why) + ",cap=" + label(r.cap),
             1);
  return p.str();
}

bool take_reset_request(const std::string& path, uid_t slurm_uid, std::string* refused) noexcept {
  try {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return false;
    const bool allowed = S_ISREG(st.st_mode) && (st.st_uid == 0 || st.st_uid == slurm_uid);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      if (refused != nullptr) *refused = "cannot remove the reset request " + path + ": " + std::strerror(errno);
      return false;  // honoured once only: left in place, it would reset every round
    }
    if (!allowed && refused != nullptr)
      *refused = "reset request " + path + " refused: owned by uid " + std::to_string(st.st_uid) +
                 ", not root or SlurmUser";
    return allowed;
  } catch (...) {
    return false;
  }
}

}  // namespace pollux::sched

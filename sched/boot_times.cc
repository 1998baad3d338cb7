// SPDX-License-Identifier: GPL-2.0-or-later
// Nodes' boot times under power saving (see boot_times.h).
#include "boot_times.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include "pollux/atomic_file.h"

namespace pollux::sched {
namespace {

constexpr std::string_view kHeader = "pollux_boot_times 1";

std::string secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

}  // namespace

std::vector<std::string> BootTimes::observe(Snapshot& snap) {
  std::vector<std::string> lines;
  // A node gone from the cluster (or its GPUs) is watched no longer.
  const std::size_t watched = booting_.size();
  for (auto it = booting_.begin(); it != booting_.end();)
    it = std::any_of(snap.nodes.begin(), snap.nodes.end(), [&](const NodeSnapshot& n) { return n.name == it->first; })
             ? std::next(it)
             : booting_.erase(it);
  changed_ = changed_ || booting_.size() != watched;
  for (const NodeSnapshot& n : snap.nodes) {
    const auto seen = booting_.find(n.name);
    if (n.power == Power::kBooting) {
      if (n.boot_requested > 0 && (seen == booting_.end() || seen->second != n.boot_requested)) {
        booting_[n.name] = n.boot_requested;
        changed_ = true;  // kept: a restart before it registers still measures it
      }
      continue;
    }
    if (seen == booting_.end()) continue;
    const double requested = seen->second;
    booting_.erase(seen);
    changed_ = true;
    if (n.power == Power::kOn && n.usable) {
      // Registered: its slurmd started within the boot, else its first answer.
      double registered = n.slurmd_started;
      if (!(registered >= requested && registered <= n.last_response + 1)) registered = n.last_response;
      const double took = registered - requested;
      if (!(took >= 0 && took < 86400 && std::isfinite(took))) continue;
      NodeBoots& b = learnt_[n.name];
      b.seconds = (b.seconds * static_cast<double>(b.boots) + took) / static_cast<double>(b.boots + 1);
      ++b.boots;
      changed_ = true;
      lines.push_back("node " + n.name + " booted in " + secs(took) + " s (resume to registration; mean of " +
                      std::to_string(b.boots) + " boot(s): " + secs(b.seconds) + " s)");
    } else if (!n.usable) {
      lines.push_back("node " + n.name + " did not register after its resume " + secs(snap.now - requested) +
                      " s ago: it is out of service (ResumeTimeout, or set DOWN); jobs placed there are placed again");
    }
  }
  for (std::size_t i = 0; i < snap.nodes.size(); ++i) {
    NodeSnapshot& n = snap.nodes[i];
    n.boot_wait = 0;
    if (n.power == Power::kOn) continue;
    const double e = expected(snap, i);
    n.boot_wait = n.power == Power::kBooting && n.boot_requested > 0
                      ? std::max(0.0, e - std::max(0.0, snap.now - n.boot_requested))
                      : e;
  }
  return lines;
}

bool awaits_boot(const Snapshot& snap) {
  const auto off = [&](const Placement& p) {
    return std::any_of(p.begin(), p.end(), [&](const NodeShare& s) {
      return static_cast<std::size_t>(s.node) < snap.nodes.size() &&
             snap.nodes[static_cast<std::size_t>(s.node)].power != Power::kOn;
    });
  };
  return std::any_of(snap.jobs.begin(), snap.jobs.end(),
                     [&](const ElasticJobSnapshot& j) { return off(j.current) || off(j.decided); });
}

double BootTimes::expected(const Snapshot& snap, std::size_t node) const {
  const NodeSnapshot& n = snap.nodes[node];
  if (auto it = learnt_.find(n.name); it != learnt_.end()) return it->second.seconds;
  double same_type = 0, any = 0;
  for (const NodeSnapshot& m : snap.nodes) {
    auto it = learnt_.find(m.name);
    if (it == learnt_.end()) continue;
    any = std::max(any, it->second.seconds);
    if (m.type == n.type) same_type = std::max(same_type, it->second.seconds);
  }
  return same_type > 0 ? same_type : any;
}

std::string BootTimes::recall() noexcept {
  if (path_.empty()) return {};
  ParsedBootTimes r = read_boot_times(path_);
  if (r.missing) return {};
  if (!r.error.empty()) return r.error + ": nodes' boot times are learnt afresh";
  learnt_ = std::move(r.learnt);
  booting_ = std::move(r.booting);
  return {};
}

std::string BootTimes::keep() noexcept {
  if (path_.empty() || !changed_) return {};
  changed_ = false;
  std::string failed = write_boot_times(path_, learnt_, booting_);
  if (failed == write_error_) return {};
  write_error_ = failed;
  return failed.empty() ? failed : "the nodes' boot times were not written (a restart would lose them): " + failed;
}

std::string format_boot_times(const std::map<std::string, NodeBoots>& learnt,
                              const std::map<std::string, double>& booting) {
  std::string out(kHeader);
  out += '\n';
  for (const auto& [name, b] : learnt) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.17g %lld\n", b.seconds, b.boots);
    out += "node " + name + buf;
  }
  for (const auto& [name, requested] : booting) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.17g\n", requested);
    out += "booting " + name + buf;
  }
  return out;
}

ParsedBootTimes parse_boot_times(std::string_view text, const std::string& path) {
  ParsedBootTimes r;
  int line_no = 0;
  auto refuse = [&](const std::string& why) {
    r.learnt.clear();
    r.booting.clear();
    r.error = path + ":" + std::to_string(line_no) + ": " + why;
    return r;
  };
  bool header = false;
  while (!text.empty()) {
    ++line_no;
    const auto end = text.find('\n');
    if (end == std::string_view::npos) return refuse("truncated (no end of line)");
    const std::string line(text.substr(0, end));
    text.remove_prefix(end + 1);
    if (!header) {
      if (line != kHeader) return refuse("not a pollux_boot_times file of this version");
      header = true;
      continue;
    }
    char name[256];
    double seconds = 0;
    long long boots = 0;
    int used = 0;
    const auto printable = [&] {
      for (const char* c = name; *c != '\0'; ++c)
        if (*c < 0x21 || *c > 0x7e) return false;
      return true;
    };
    if (line.size() <= 300 && line.rfind("booting ", 0) == 0) {
      double requested = 0;
      if (std::sscanf(line.c_str(), "booting %255s %lf%n", name, &requested, &used) != 2 ||
          static_cast<std::size_t>(used) != line.size())
        return refuse("not 'booting <name> <resume time>'");
      if (!std::isfinite(requested) || requested <= 0 || requested >= 1e11)
        return refuse("a resume time must be a Unix time (0..1e11)");
      if (!printable()) return refuse("a node name with an unprintable character");
      if (!r.booting.emplace(name, requested).second) return refuse(std::string("booting ") + name + " twice");
      continue;
    }
    if (line.size() > 300 ||
        std::sscanf(line.c_str(), "node %255s %lf %lld%n", name, &seconds, &boots, &used) != 3 ||
        static_cast<std::size_t>(used) != line.size())
      return refuse("not 'node <name> <seconds> <boots>'");
    if (!std::isfinite(seconds) || seconds < 0 || seconds >= 86400 || boots < 1)
      return refuse("seconds must be 0..86400 and boots at least 1");
    if (!printable()) return refuse("a node name with an unprintable character");
    if (!r.learnt.emplace(name, NodeBoots{seconds, boots}).second) return refuse(std::string("node ") + name + " twice");
  }
  if (!header) return refuse("empty");
  return r;
}

ParsedBootTimes read_boot_times(const std::string& path) noexcept {
  try {
    if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) {
      ParsedBootTimes r;
      r.missing = true;
      r.error = path + ": no such file";
      return r;
    }
    const FileRead f = read_file_checked(path, 1 << 20, ::geteuid());
    if (!f) {
      ParsedBootTimes r;
      r.error = f.error;
      return r;
    }
    return parse_boot_times(f.data, path);
  } catch (const std::exception& e) {
    ParsedBootTimes r;
    r.error = path + ": " + e.what();
    return r;
  }
}

std::string write_boot_times(const std::string& path, const std::map<std::string, NodeBoots>& learnt,
                             const std::map<std::string, double>& booting) noexcept {
  try {
    return write_file_atomic(path, format_boot_times(learnt, booting), 0600);
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace pollux::sched

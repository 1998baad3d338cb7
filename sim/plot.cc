// gnuplot pictures (see plot.h).
#include "plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "pollux/policies.h"
#include "report.h"

extern char** environ;

namespace pollux::sim {
namespace {

// File names come from workload names: keep them shell- and gnuplot-safe.
std::string safe(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) c = '_';
  return out;
}

// Runs `argv` (no shell); returns its exit status, or -1 if it could not start.
int run(const std::vector<std::string>& argv, bool quiet) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A gnuplot single-quoted string: quotes are doubled.
std::string q(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

void gnuplot(const std::string& program, const std::string& script_path, const std::string& script) {
  write_file_atomically(script_path, script);
  if (run({program, script_path}, false) != 0)
    throw std::runtime_error(script_path + ": gnuplot (" + program + ") failed");
}

void write_run(const std::string& dir, const std::string& program, const SimOptions& o, const RunResult& r) {
  // Auto-scaled runs carry their mode, so that the modes compare in one directory.
  const bool scaled = o.autoscale.mode != ScaleMode::kOff;
  const std::string run_name = safe(o.policy) + (scaled ? std::string("-") + scale_mode_name(o.autoscale.mode) : "");
  const std::string base = run_name + "-" + safe(r.workload);
  // JCT CDF data.
  std::vector<double> jcts;
  for (const JobOutcome& j : r.jobs) jcts.push_back(j.jct);
  std::sort(jcts.begin(), jcts.end());
  std::ostringstream cdf;
  cdf << "# " << o.policy << " " << r.workload << ": JCT (s), fraction of jobs done\n";
  for (std::size_t i = 0; i < jcts.size(); ++i)
    cdf << jcts[i] << " " << static_cast<double>(i + 1) / static_cast<double>(jcts.size()) << "\n";
  write_file_atomically(dir + "/" + base + ".jct", cdf.str());

  // GPUs per job per round (matrix), and cluster usage per round.
  std::ostringstream gpus, usage;
  for (std::size_t j = 0; j < r.jobs.size(); ++j) {
    for (std::size_t t = 0; t < r.gpus.size(); ++t) gpus << (t ? " " : "") << r.gpus[t][j];
    gpus << "\n";
  }
  usage << "# time (s), GPUs allocated, jobs running, jobs waiting\n";
  int max_gpus = 1;
  for (std::size_t t = 0; t < r.gpus.size(); ++t) {
    int used = 0, running = 0, waiting = 0;
    for (std::size_t j = 0; j < r.jobs.size(); ++j) {
      const int g = r.gpus[t][j];
      used += g;
      max_gpus = std::max(max_gpus, g);
      const bool live = r.jobs[j].submit_time <= r.times[t] && r.jobs[j].completion_time > r.times[t];
      running += g > 0;
      waiting += live && g == 0;
    }
    usage << r.times[t] << " " << used << " " << running << " " << waiting << "\n";
  }
  write_file_atomically(dir + "/" + base + ".gpus", gpus.str());
  write_file_atomically(dir + "/" + base + ".usage", usage.str());
  if (scaled) {
    std::ostringstream scale;
    scale << "# time (s), GPUs paid, GPUs up, utility (-1: not known)\n";
    for (std::size_t t = 0; t < r.scale_times.size(); ++t)
      scale << r.scale_times[t] << " " << r.nodes_on[t] * o.gpus_per_node << " " << r.nodes_up[t] * o.gpus_per_node
            << " " << r.utility[t] << "\n";
    write_file_atomically(dir + "/" + base + ".scale", scale.str());
  }

  std::ostringstream gp;
  gp << "set terminal pngcairo size 1400,900 font 'sans,10'\n"
     << "set output " << q(dir + "/" + base + "-gpus.png") << "\n"
     << "set multiplot title '" << run_name << ", " << safe(r.workload) << ": GPUs allocated per job over time ("
     << cluster_size(o) << ")'\n"
     << "set lmargin at screen 0.07\nset rmargin at screen 0.90\n"
     << "set tmargin at screen 0.94\nset bmargin at screen 0.36\n"
     << "set xrange [0:" << (r.times.empty() ? 1.0 : r.times.back() / 3600.0) << "]\n"
     << "set yrange [-0.5:" << r.jobs.size() - 0.5 << "] reverse\n"
     << "set ylabel 'job (submission order)'\nset format x ''\n"
     << "set cblabel 'GPUs'\nset cbrange [0:" << max_gpus << "]\n"
     << "set palette defined (0 'white', 0.01 '#c6dbef', " << std::max(1, max_gpus / 4) << " '#6baed6', "
     << max_gpus << " '#08306b')\n"
     << "plot " << q(dir + "/" + base + ".gpus") << " matrix using (($1 + 1) * " << o.interval
     << " / 3600.0):2:3 with image notitle\n"
     << "unset colorbox\nset tmargin at screen 0.33\nset bmargin at screen 0.07\n"
     << "set autoscale y\nset yrange [0:*] noreverse\nset format x '%g'\nset xlabel 'time (h)'\n"
     << "set ylabel 'count'\nset key right center opaque box\n"
     << (scaled ? "set y2range [0:1]\nset y2tics 0.25\nset y2label 'utility'\n" : "")
     << "plot " << q(dir + "/" + base + ".usage") << " using ($1 / 3600.0):2 with steps lw 1.5 title 'GPUs allocated', "
     << "'' using ($1 / 3600.0):3 with steps title 'jobs running', "
     << "'' using ($1 / 3600.0):4 with steps title 'jobs waiting'";
  if (scaled)  // the GPUs paid for, and the utility the goodput rule keeps in its band (right axis)
    gp << ", " << q(dir + "/" + base + ".scale") << " using ($1 / 3600.0):2 with steps lw 1.5 dt 2 title 'GPUs paid', "
       << "'' using ($1 / 3600.0):($4 < 0 ? NaN : $4) axes x1y2 with lines lc rgb '#999999' title 'utility (right)'";
  gp << "\nunset multiplot\n";
  gnuplot(program, dir + "/" + base + "-gpus.gp", gp.str());

  // CDF of every policy with data for this workload in the directory.
  std::ostringstream c;
  c << "set terminal svg size 800,500 dynamic font 'sans,11'\n"
    << "set output " << q(dir + "/" + safe(r.workload) + "-jct-cdf.svg") << "\n"
    << "set title '" << safe(r.workload) << ": job completion time CDF'\n"
    << "set xlabel 'JCT (s)'\nset ylabel 'fraction of jobs'\nset logscale x\nset yrange [0:1]\n"
    << "set key bottom right\nset grid\n";
  std::string plots;
  for (const PolicyEntry& e : policies())
    for (ScaleMode m : {ScaleMode::kOff, ScaleMode::kFixed, ScaleMode::kQueue, ScaleMode::kGoodput}) {
      const std::string p = std::string(e.name) + (m == ScaleMode::kOff ? "" : std::string("-") + scale_mode_name(m));
      const std::string data = dir + "/" + p + "-" + safe(r.workload) + ".jct";
      if (!exists(data)) continue;
      plots += std::string(plots.empty() ? "plot " : ", ") + q(data) + " using 1:2 with steps lw 2 title '" + p + "'";
    }
  c << plots << "\n";
  gnuplot(program, dir + "/" + safe(r.workload) + "-jct-cdf.gp", c.str());
}

}  // namespace

std::string gnuplot_program() {
  if (const char* g = std::getenv("GNUPLOT"); g != nullptr && *g != '\0') return g;
#ifdef POLLUX_SIM_GNUPLOT
  if (std::strcmp(POLLUX_SIM_GNUPLOT, "no") != 0 && exists(POLLUX_SIM_GNUPLOT)) return POLLUX_SIM_GNUPLOT;
#endif
  return "gnuplot";
}

std::optional<std::string> gnuplot_problem(const std::string& program) {
  if (run({program, "--version"}, true) != 0)
    return "--plot needs gnuplot ('" + program + "' did not run): install the Debian package gnuplot-nox";
  return std::nullopt;
}

std::optional<std::string> plot_dir_problem(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return "not a directory";
    return directory_write_problem(dir);
  }
  if (errno != ENOENT && errno != ENOTDIR) return std::string("cannot use it: ") + std::strerror(errno);
  // write_plots creates the directory itself (not its parents).
  if (auto problem = directory_write_problem(parent_directory(dir))) return "cannot create it: " + *problem;
  return std::nullopt;
}

void write_plots(const std::string& dir, const std::string& program, const SimOptions& options,
                 const std::vector<RunResult>& runs) {
  if (!exists(dir) && ::mkdir(dir.c_str(), 0777) != 0)
    throw std::runtime_error(dir + ": cannot create: " + std::strerror(errno));
  for (const RunResult& r : runs) write_run(dir, program, options, r);
}

}  // namespace pollux::sim

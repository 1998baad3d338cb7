// Pictures of a run, drawn by gnuplot: per workload, the CDF of job
// completion times of every policy whose data is in the plot directory
// (SVG), and per policy and workload the GPUs each job held over time,
// with the cluster's GPUs in use and the jobs waiting (PNG).
#ifndef POLLUX_SIM_PLOT_H
#define POLLUX_SIM_PLOT_H

#include <optional>
#include <string>
#include <vector>

#include "cluster_sim.h"

namespace pollux::sim {

/// The gnuplot to run: $GNUPLOT if set, else the one configure found,
/// else "gnuplot" from PATH.
std::string gnuplot_program();

/// Why gnuplot cannot be used (one line), or nullopt when it runs.
std::optional<std::string> gnuplot_problem(const std::string& gnuplot);

/// Why write_plots could not write into `dir` (it is not a directory, or
/// cannot be created, or is not writable), or nullopt. Checked before a run.
std::optional<std::string> plot_dir_problem(const std::string& dir);

/// Writes into `dir` (created if missing), for each run:
///   <policy>-<workload>.jct      sorted JCTs and their cumulative fraction
///   (with --autoscale, <policy>-<mode>-<workload>.* for every file, and
///   <policy>-<mode>-<workload>.scale: time, GPUs paid, GPUs up, utility)
///   <policy>-<workload>.gpus     GPUs per job (rows) per round (columns)
///   <policy>-<workload>.usage    time, GPUs allocated, jobs running, jobs waiting
///   <policy>-<workload>-gpus.png and <workload>-jct-cdf.svg (with the .gp scripts)
/// Runs need record_timeline. std::runtime_error on failure.
void write_plots(const std::string& dir, const std::string& gnuplot, const SimOptions& options,
                 const std::vector<RunResult>& runs);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_PLOT_H

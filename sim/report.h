// What pollux-sim prints and writes: the per-workload table and the JSON
// summary (format in doc/man/pollux-sim.1).
#ifndef POLLUX_SIM_REPORT_H
#define POLLUX_SIM_REPORT_H

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cluster_sim.h"

namespace pollux::sim {

/// The cluster's GPUs, over its types' nodes when it has types.
int total_gpus(const SimOptions& options);
/// "N nodes x G GPUs", or "N nodes, T GPUs" when node sizes differ by type.
std::string cluster_size(const SimOptions& options);

/// Mean over the runs of their average JCT.
double mean_avg_jct(const std::vector<RunResult>& runs);

/// One line per workload (jobs, avg JCT, p99 JCT, makespan, GPU-hours,
/// restarts per job), then the mean of the average JCTs.
void print_table(std::ostream& out, const SimOptions& options, const std::vector<RunResult>& runs);

/// The JSON summary: {"policy", "config" (with GPU types: "gpus",
/// "type_aware" and "gpu_types": [{"name", "nodes", "gpus_per_node",
/// "speed"}]), "workloads": {name: {"avg_jct",
/// "p99_jct", "makespan", "gpu_hours", "restarts_per_job", "jcts": {job:
/// seconds}}}, "mean_avg_jct"}. Deterministic for a given run.
std::string to_json(const SimOptions& options, const std::string& traces_dir, const std::vector<RunResult>& runs);

/// The directory part of `path` ("." for a bare name, "/" for "/name").
std::string parent_directory(std::string path);

/// Why no file can be created in `dir` ("directory D does not exist", "D
/// is not a directory", "cannot write in directory D: <reason>"), found by
/// creating and removing a probe file; nullopt when one can.
std::optional<std::string> directory_write_problem(const std::string& dir);

/// Why write_file_atomically(path, ...) would fail for want of a writable
/// directory (or because `path` is a directory), or nullopt. Checked
/// before a run, so that a bad --json is found in seconds, not after it.
std::optional<std::string> output_file_problem(const std::string& path);

/// Writes `text` to `path` atomically (a temporary file in the same
/// directory, then rename); std::runtime_error naming the path on failure.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_REPORT_H

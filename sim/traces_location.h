// Where pollux-sim finds its traces. The project ships the Pollux OSDI'21
// traces (sim/traces/pollux-osdi21, installed under
// $(datadir)/pollux/traces/pollux-osdi21): the default is the installed
// copy, or the source-tree copy when the program runs from its build tree
// (sim's, or contrib/replay's for pollux-emulate).
#ifndef POLLUX_SIM_TRACES_LOCATION_H
#define POLLUX_SIM_TRACES_LOCATION_H

#include <string>

namespace pollux::sim {

/// The default traces root (holding traces/ and workloads*/).
std::string default_traces_root();

/// The directory holding one sub-directory per application: `dir` itself,
/// or `dir`/traces when that exists (a traces root). InputError when
/// neither holds any application.
std::string application_dir(const std::string& dir);

/// The traces root of an application directory (its parent when it is
/// named traces/), where the bundled workloads live.
std::string traces_root(const std::string& application_dir);

/// A WORKLOAD argument as given when it exists; otherwise, when relative,
/// the same path under the traces root if it exists there (so that
/// `pollux-sim --policy pollux workloads` runs the shipped workloads).
std::string resolve_workload_arg(const std::string& arg, const std::string& root);

}  // namespace pollux::sim

#endif  // POLLUX_SIM_TRACES_LOCATION_H

// Where the spool is: the directory that hint files are written into
// (agent) and read from (plugin). See doc/hint-format.md, "Location".
#ifndef POLLUX_SPOOL_DIR_H
#define POLLUX_SPOOL_DIR_H

#include <optional>
#include <string>
#include <string_view>

namespace pollux {

/// Used when neither POLLUX_SPOOL_DIR nor pollux_spool_dir is set.
inline constexpr const char* kDefaultSpoolDir = "/var/spool/slurm/pollux";
/// The SchedulerParameters option that names the spool.
inline constexpr const char* kSpoolDirParameter = "pollux_spool_dir";

/// Value of `key` in a Slurm SchedulerParameters string
/// ("bf_interval=30,pollux_spool_dir=/x,..."); keys compare
/// case-insensitively as Slurm's do. nullopt when absent, "" for a bare key.
std::optional<std::string> scheduler_parameter(std::string_view params, std::string_view key);

/// SchedulerParameters of a slurm.conf file (following its Include lines,
/// relative to the file's directory); nullopt when the file or the option
/// is missing.
std::optional<std::string> read_scheduler_parameters(const std::string& slurm_conf);
/// The value of `key` (case-insensitive, e.g. "StateSaveLocation") in a
/// slurm.conf file, following its Include lines; the last one wins, as in
/// Slurm. nullopt when the file or the key is missing.
std::optional<std::string> read_slurm_conf_value(const std::string& slurm_conf, std::string_view key);
/// The node's slurm.conf: $SLURM_CONF, else /etc/slurm/slurm.conf.
std::string slurm_conf_path();

/// The job's spool directory: $POLLUX_SPOOL_DIR, else pollux_spool_dir in
/// SchedulerParameters of $SLURM_CONF (default /etc/slurm/slurm.conf), else
/// kDefaultSpoolDir.
std::string resolve_spool_dir();

}  // namespace pollux

#endif  // POLLUX_SPOOL_DIR_H

// Locating the spool directory (see pollux/spool_dir.h).
#include "pollux/spool_dir.h"

#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "pollux/atomic_file.h"

namespace pollux {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Joins continuation lines (trailing backslash) and drops comments, as
// Slurm's parser does.
std::string logical_lines(std::istream& in) {
  std::string out, line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      out += line;
    } else {
      out += line;
      out += '\n';
    }
  }
  return out;
}

std::optional<std::string> scan_conf(const std::string& path, std::string_view key, int depth) {
  if (depth > 8) return std::nullopt;  // Include loop
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::istringstream lines(logical_lines(in));
  std::optional<std::string> found;
  std::string line;
  while (std::getline(lines, line)) {
    std::string_view l = trim(line);
    if (l.size() > 8 && iequals(l.substr(0, 7), "include") && std::isspace(static_cast<unsigned char>(l[7]))) {
      std::string inc(trim(l.substr(8)));
      if (!inc.empty() && inc.front() != '/') inc = parent_dir(path) + "/" + inc;
      if (auto v = scan_conf(inc, key, depth + 1)) found = v;
      continue;
    }
    // A line holds whitespace-separated Key=Value pairs.
    std::istringstream words{std::string(l)};
    std::string word;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos) continue;
      if (!iequals(std::string_view(word).substr(0, eq), key)) continue;
      std::string value = word.substr(eq + 1);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
      found = value;  // the last one wins, as in Slurm
    }
  }
  return found;
}

}  // namespace

std::optional<std::string> scheduler_parameter(std::string_view params, std::string_view key) {
  while (!params.empty()) {
    const auto comma = params.find(',');
    std::string_view item = trim(params.substr(0, comma));
    params = comma == std::string_view::npos ? std::string_view() : params.substr(comma + 1);
    const auto eq = item.find('=');
    const std::string_view k = trim(item.substr(0, eq));
    if (!iequals(k, key)) continue;
    return eq == std::string_view::npos ? std::string() : std::string(trim(item.substr(eq + 1)));
  }
  return std::nullopt;
}

std::optional<std::string> read_slurm_conf_value(const std::string& slurm_conf, std::string_view key) {
  return scan_conf(slurm_conf, key, 0);
}

std::optional<std::string> read_scheduler_parameters(const std::string& slurm_conf) {
  return read_slurm_conf_value(slurm_conf, "SchedulerParameters");
}

std::string slurm_conf_path() {
  const char* conf = std::getenv("SLURM_CONF");
  return conf != nullptr && *conf != '\0' ? conf : "/etc/slurm/slurm.conf";
}

std::string resolve_spool_dir() {
  if (const char* env = std::getenv("POLLUX_SPOOL_DIR"); env != nullptr && *env != '\0') return env;
  if (auto params = read_scheduler_parameters(slurm_conf_path())) {
    if (auto dir = scheduler_parameter(*params, kSpoolDirParameter); dir && !dir->empty()) return *dir;
  }
  return kDefaultSpoolDir;
}

}  // namespace pollux

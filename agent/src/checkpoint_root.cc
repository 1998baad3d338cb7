// Where a job's checkpoints live (see checkpoint_root.h).
#include "checkpoint_root.h"

#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "pollux/checkpoint_store.h"
#include "pollux/spool_dir.h"

namespace pollux {
namespace {

const char* given_checkpoint_dir(const AgentOptions& o) {
  if (!o.checkpoint_dir.empty()) return o.checkpoint_dir.c_str();
  const char* v = std::getenv("POLLUX_CHECKPOINT_DIR");
  return v != nullptr && *v != '\0' ? v : nullptr;
}

const char* home_dir() {
  const char* v = std::getenv("HOME");
  return v != nullptr && *v == '/' ? v : nullptr;
}

}  // namespace

bool default_job_checkpoint_root(const AgentOptions& o, const JobEnvironment& e) {
  return given_checkpoint_dir(o) == nullptr && e.job_id != 0 && home_dir() != nullptr;
}

bool agent_detail::holds_earlier_job(const AgentOptions& o, const JobEnvironment& e) {
  return e.restart_count == 0 && default_job_checkpoint_root(o, e);
}

// Not the submit directory (often the source tree); the user's home, which
// a cluster's nodes share, keyed by cluster and job id. The cluster's name
// alone does not tell clusters apart (every local cluster is "pollux", and
// two may share a home): the key adds a hash of slurmctld's
// StateSaveLocation, where the cluster keeps its job ids, which every
// node's slurm.conf names. The id alone does not make it the job's (Slurm
// reuses ids, and its submit time, which changes at every requeue, is not
// exported): a run at restart count 0 is a job's first, so restore() sets
// aside what an earlier job left there.
std::string checkpoint_root(const AgentOptions& o, const JobEnvironment& e) {
  if (const char* given = given_checkpoint_dir(o)) return given;
  if (!default_job_checkpoint_root(o, e)) return "./pollux-ckpt/local";
  const std::string base = std::string(home_dir()) + "/.cache/pollux/checkpoints/";
  const std::string cluster = e.cluster.empty() ? "slurm" : e.cluster;
  const std::string id = std::to_string(e.job_id);
  const auto state = read_slurm_conf_value(slurm_conf_path(), "StateSaveLocation");
  if (!state || state->empty()) return base + cluster + "/" + id;  // no slurm.conf to read: the name alone
  std::uint32_t h = 2166136261u;  // FNV-1a: short, stable across builds and hosts
  for (const unsigned char c : *state) h = (h ^ c) * 16777619u;
  char key[16];
  std::snprintf(key, sizeof key, "-%08x", static_cast<unsigned>(h));
  const std::string keyed = base + cluster + key + "/" + id;
  // A job requeued across the upgrade that introduced the key keeps the
  // checkpoints its earlier runs wrote under the name alone (a first run
  // never takes them: they may be another cluster's job with this id).
  const std::string unkeyed = base + cluster + "/" + id;
  struct stat st {};
  if (e.restart_count > 0 && ::stat(keyed.c_str(), &st) != 0 && ::stat(unkeyed.c_str(), &st) == 0) return unkeyed;
  return keyed;
}

bool checkpoint_waiting(const AgentOptions& options) {
  const JobEnvironment env = JobEnvironment::from_environment();
  if (agent_detail::holds_earlier_job(options, env)) return false;  // a first run
  return CheckpointStore(checkpoint_root(options, env), env.restart_count).latest().has_value();
}

}  // namespace pollux

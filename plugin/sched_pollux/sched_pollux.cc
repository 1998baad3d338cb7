// SPDX-License-Identifier: GPL-2.0-or-later
// sched/pollux: the slurmctld scheduler plugin. SchedulerType=sched/pollux
// in slurm.conf loads it; doc/man/sched_pollux.5 is its manual. The plugin
// interface (src/slurmctld/sched_plugin.c in Slurm 22.05): the three data
// symbols, init(), fini() and sched_p_reconfig(), structured like Slurm's
// sched/backfill. Nothing thrown inside ever reaches slurmctld.
#include <exception>

#include "common/slurm_api.h"
#include "round_thread.h"

#define POLLUX_EXPORT __attribute__((visibility("default")))

extern "C" {

POLLUX_EXPORT extern const char plugin_name[] = "Pollux goodput scheduler plugin";
POLLUX_EXPORT extern const char plugin_type[] = "sched/pollux";
POLLUX_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;

POLLUX_EXPORT int init(void) {
  if (slurmctld_config.scheduling_disabled) return SLURM_SUCCESS;
  try {
    pollux::sched::start_rounds();
    sched_verbose("sched/pollux: plugin loaded");
    return SLURM_SUCCESS;
  } catch (const std::exception& e) {
    error("sched/pollux: cannot start: %s", e.what());
  } catch (...) {
    error("sched/pollux: cannot start (unknown exception)");
  }
  return SLURM_ERROR;
}

POLLUX_EXPORT void fini(void) {
  try {
    pollux::sched::stop_rounds();
    verbose("sched/pollux: plugin shutting down");
  } catch (...) {
    error("sched/pollux: error while shutting down");
  }
}

POLLUX_EXPORT int sched_p_reconfig(void) {
  try {
    pollux::sched::reconfigure_rounds();
  } catch (...) {
    error("sched/pollux: reconfigure failed");
  }
  return SLURM_SUCCESS;
}

}  // extern "C"

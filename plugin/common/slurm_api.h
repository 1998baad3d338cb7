// SPDX-License-Identifier: GPL-2.0-or-later
// The slurmctld internals the Pollux plugins use, from the Slurm source
// tree of the installed version (configure --with-slurm-source). Every
// symbol resolves from the slurmctld executable when the plugin is loaded.
#ifndef POLLUX_SCHED_SLURM_API_H
#define POLLUX_SCHED_SLURM_API_H

extern "C" {
#include "config.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/slurm_protocol_api.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"
}

#endif  // POLLUX_SCHED_SLURM_API_H

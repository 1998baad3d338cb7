// SPDX-License-Identifier: GPL-2.0-or-later
// The slurmctld internals the Pollux plugins use, from the Slurm source
// tree of the installed version (configure --with-slurm-source). Every
// symbol resolves from the slurmctld executable when the plugin is loaded.
// Headers that moved between releases are included from where the tree has
// them (SLURM_VERSION_NUMBER, from slurm/slurm_version.h); the API
// differences themselves are in compat_*.h, one header per concern.
#ifndef POLLUX_SCHED_SLURM_API_H
#define POLLUX_SCHED_SLURM_API_H

// Slurm's headers are C: 24.05's extra_constraints.h names a struct field
// `operator`, a C++ keyword. It is renamed while they are read (the plugins
// never use that field; the layout is unchanged).
#define operator slurm_operator
extern "C" {
#include "config.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "slurm/slurm_version.h"
#include "src/common/bitstring.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/interfaces/gres.h"  // 23.02 moved it from src/common
#else
#include "src/common/gres.h"
#endif
#include "src/common/list.h"
// node_feature_t and the node feature lists: in slurmctld.h up to 22.05,
// in src/common/node_features.h in 24.11 (22.05's file of that name is
// the node_features plugin interface, which 23.02 moved to src/interfaces).
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0) && __has_include("src/common/node_features.h")
#include "src/common/node_features.h"
#endif
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
#undef operator

#include <type_traits>

/// A job's details record: `struct job_details` in 22.05, an anonymous
/// struct typedef'd `job_details_t` from 23.02 on; the type of
/// job_record_t::details in every release.
using JobDetails = std::remove_pointer_t<decltype(job_record_t::details)>;

#endif  // POLLUX_SCHED_SLURM_API_H

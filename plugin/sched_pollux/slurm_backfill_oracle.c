/*
 * The second file of Slurm's backfill scheduler from 24.11 on
 * (src/plugins/sched/backfill/oracle.c: the topology-aware start-time
 * oracle backfill.c calls), compiled in beside slurm_backfill.c as Slurm
 * compiles it: its own translation unit, unmodified. Empty before 24.11.
 */
#include "slurm/slurm_version.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
#include "src/plugins/sched/backfill/oracle.c"
#endif

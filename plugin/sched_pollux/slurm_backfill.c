/*
 * Slurm's backfill scheduler (src/plugins/sched/backfill/backfill.c of the
 * Slurm source tree given to configure), compiled into sched/pollux so that
 * rigid jobs keep the backfill they had under sched/backfill
 * (pollux_backfill=yes). Its code stays Slurm's (GPL-2.0 with the OpenSSL
 * exception), taken from the tree at build time, unmodified.
 */
#include "src/plugins/sched/backfill/backfill.c"

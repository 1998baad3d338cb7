// SPDX-License-Identifier: GPL-2.0-or-later
// Starting and joining a slurmctld thread (the compiled-in backfill agent)
// on every supported Slurm. 26.05 moved slurm_thread_create() to
// threadpool.h with a thread name as first argument, and a thread it
// creates must be joined with slurm_thread_join() (the pool counts joins);
// before, it was a plain pthread, joined with pthread_join().
#ifndef POLLUX_COMPAT_THREAD_H
#define POLLUX_COMPAT_THREAD_H

#include "slurm_api.h"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
extern "C" {
#include "src/common/threadpool.h"
}
#define POLLUX_THREAD_CREATE(name, id, func, arg) slurm_thread_create(name, id, func, arg)
#define POLLUX_THREAD_JOIN(id) slurm_thread_join(id)
#else
#define POLLUX_THREAD_CREATE(name, id, func, arg) slurm_thread_create(id, func, arg)
#define POLLUX_THREAD_JOIN(id) \
  do {                         \
    pthread_join(id, nullptr); \
    id = 0;                    \
  } while (false)
#endif

#endif  // POLLUX_COMPAT_THREAD_H

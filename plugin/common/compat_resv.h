// SPDX-License-Identifier: GPL-2.0-or-later
// The nodes Slurm's reservations let a job use now, from slurmctld's own
// test (job_test_resv(), what select_nodes() asks), on every supported
// Slurm: 23.11 replaced its bitmap of excluded cores by a resv_exc_t, freed
// with reservation_delete_resv_exc_parts(). Caller holds the job write lock
// (the test may bring the job's reservation pointer up to date) and the
// node read lock.
#ifndef POLLUX_COMPAT_RESV_H
#define POLLUX_COMPAT_RESV_H

#include <ctime>

#include "slurm_api.h"

extern "C" {
#include "src/slurmctld/reservation.h"
}

namespace pollux::sched {

/// SLURM_SUCCESS and `*nodes` (the caller frees it; may be null when the
/// job may use every node) when the job may start now, else Slurm's error.
inline int job_resv_nodes(job_record_t* job, time_t now, bitstr_t** nodes) {
  time_t when = now;
  bool overlap = false;
  *nodes = nullptr;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
  resv_exc_t exc{};
  const int rc = job_test_resv(job, &when, false, nodes, &exc, &overlap, false);
  reservation_delete_resv_exc_parts(&exc);
#else
  bitstr_t* exc = nullptr;
  const int rc = job_test_resv(job, &when, false, nodes, &exc, &overlap, false);
  if (exc != nullptr) bit_free(exc);
#endif
  return rc;
}

}  // namespace pollux::sched

#endif  // POLLUX_COMPAT_RESV_H

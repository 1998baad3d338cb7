// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's list types under their current names on every supported Slurm:
// 24.11 removed the `List` and `ListIterator` typedefs (24.05 already lost
// `ListIterator`); `list_t` and `list_itr_t` exist since 23.02. Code of the
// plugins writes `list_t*` and `list_itr_t*` only.
#ifndef POLLUX_COMPAT_LIST_H
#define POLLUX_COMPAT_LIST_H

#include "slurm_api.h"

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
#endif

#endif  // POLLUX_COMPAT_LIST_H

// SPDX-License-Identifier: GPL-2.0-or-later
// Scope guards for slurmctld's locks and list iterators: an exception
// (std::bad_alloc, in practice) thrown while one is held must neither leave
// slurmctld locked nor leave an iterator registered in one of its lists.
#ifndef POLLUX_SCHED_SLURM_RAII_H
#define POLLUX_SCHED_SLURM_RAII_H

#include "compat_list.h"
#include "slurm_api.h"

namespace pollux::sched {

class SlurmctldLock {
 public:
  explicit SlurmctldLock(slurmctld_lock_t lock) : lock_(lock) { lock_slurmctld(lock_); }
  ~SlurmctldLock() { unlock_slurmctld(lock_); }
  SlurmctldLock(const SlurmctldLock&) = delete;
  SlurmctldLock& operator=(const SlurmctldLock&) = delete;

 private:
  slurmctld_lock_t lock_;
};

class ListIteratorGuard {
 public:
  explicit ListIteratorGuard(list_t* list) : it_(list_iterator_create(list)) {}
  ~ListIteratorGuard() { list_iterator_destroy(it_); }
  ListIteratorGuard(const ListIteratorGuard&) = delete;
  ListIteratorGuard& operator=(const ListIteratorGuard&) = delete;
  template <typename T>
  T* next() { return static_cast<T*>(list_next(it_)); }

 private:
  list_itr_t* it_;
};

}  // namespace pollux::sched

#endif  // POLLUX_SCHED_SLURM_RAII_H

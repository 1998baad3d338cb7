// SPDX-License-Identifier: GPL-2.0-or-later
#include "size_limits.h"

namespace pollux::sched {

int largest_allowed(int lo, int hi, const std::function<bool(int)>& allowed) {
  int best = lo - 1;
  while (lo <= hi) {
    const int mid = lo + (hi - lo) / 2;
    if (allowed(mid)) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

bool running_size_allowed(int size, int held, FullTest full, bool growth_passes) {
  if (size <= held) return true;
  switch (full) {
    case FullTest::kPass: return true;
    case FullTest::kPerJob: return false;
    case FullTest::kUsage: return growth_passes;
  }
  return false;
}

}  // namespace pollux::sched

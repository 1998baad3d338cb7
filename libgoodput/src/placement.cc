// Placement helpers (see pollux/policy.h).
#include <algorithm>

#include "pollux/policy.h"

namespace pollux {

int placement_nodes(const Placement& p) noexcept {
  int n = 0;
  for (const NodeShare& s : p) n += s.gpus > 0;
  return n;
}

int placement_gpus(const Placement& p) noexcept {
  int g = 0;
  for (const NodeShare& s : p) g += s.gpus;
  return g;
}

Placement normalize_placement(Placement p) {
  std::sort(p.begin(), p.end(), [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; });
  // In place (the local search normalises millions of placements: a new
  // vector each time was a tenth of pollux-sim's time in malloc).
  std::size_t kept = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (kept > 0 && p[kept - 1].node == p[i].node)
      p[kept - 1].gpus += p[i].gpus;
    else
      p[kept++] = p[i];
  }
  p.resize(kept);
  p.erase(std::remove_if(p.begin(), p.end(), [](const NodeShare& s) { return s.gpus <= 0; }), p.end());
  return p;
}

}  // namespace pollux

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
  Placement out;
  for (const NodeShare& s : p) {
    if (!out.empty() && out.back().node == s.node)
      out.back().gpus += s.gpus;
    else
      out.push_back(s);
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const NodeShare& s) { return s.gpus <= 0; }), out.end());
  return out;
}

}  // namespace pollux

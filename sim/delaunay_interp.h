// Scattered-data linear interpolation on a Delaunay triangulation.
//
// The value at a point is the barycentric combination of the values at the
// vertices of the simplex that contains it; outside the convex hull of the
// data there is no value. This is what SciPy's LinearNDInterpolator
// computes, and the triangulation is made the same way: Qhull (reentrant
// libqhull_r) with the options SciPy passes, "d Qbb Qc Qz Q12 Qt", on the
// points in the order given, so that ties among co-spherical points (the
// traces are grids) are broken alike.
#ifndef POLLUX_SIM_DELAUNAY_INTERP_H
#define POLLUX_SIM_DELAUNAY_INTERP_H

#include <cstddef>
#include <vector>

namespace pollux::sim {

class DelaunayInterpolator {
 public:
  /// `points` holds n points of `dim` coordinates each (row-major), `values`
  /// n rows of `nvalues` each. Throws std::runtime_error with Qhull's
  /// message when the points cannot be triangulated (fewer than dim + 1
  /// points, or all in a lower-dimensional plane).
  DelaunayInterpolator(int dim, std::vector<double> points, int nvalues, std::vector<double> values);

  /// Writes the `nvalues` interpolated values at `x` (dim coordinates) to
  /// `out` and returns true, or returns false when `x` is outside the hull.
  /// Thread-safe (const, no caches).
  bool interpolate(const double* x, double* out) const;

  int dim() const noexcept { return dim_; }
  std::size_t simplex_count() const noexcept { return simplices_.size(); }

 private:
  struct Simplex {
    std::vector<int> vertex;      // dim + 1 point indices
    std::vector<double> inverse;  // dim x dim: barycentric transform
    std::vector<double> lo, hi;   // bounding box, for a quick reject
  };
  bool barycentric(const Simplex& s, const double* x, double eps, double* coords) const;

  int dim_;
  int nvalues_;
  std::vector<double> points_;
  std::vector<double> values_;
  std::vector<Simplex> simplices_;
};

}  // namespace pollux::sim

#endif  // POLLUX_SIM_DELAUNAY_INTERP_H

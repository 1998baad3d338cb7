// Delaunay-based linear interpolation with Qhull (see delaunay_interp.h).
extern "C" {
#include <libqhull_r/qhull_ra.h>
}

#include "delaunay_interp.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace pollux::sim {
namespace {

// Tolerances of SciPy's point location: a point is inside a simplex when
// its barycentric coordinates are in [-eps, 1 + eps]; a second, broader
// pass catches points on the hull that rounding put just outside.
constexpr double kEps = 100 * DBL_EPSILON;
const double kEpsBroad = std::sqrt(DBL_EPSILON);
// A simplex whose transform is this ill-conditioned is degenerate (flat):
// skipped, as SciPy does.
constexpr double kMinRcond = 1000 * DBL_EPSILON;

// Inverts the n x n row-major matrix `a` in place by Gauss-Jordan with
// partial pivoting; false if it is singular.
bool invert(std::vector<double>& a, int n) {
  std::vector<double> inv(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) inv[static_cast<std::size_t>(i) * n + i] = 1.0;
  for (int col = 0; col < n; ++col) {
    int piv = col;
    for (int r = col + 1; r < n; ++r)
      if (std::fabs(a[static_cast<std::size_t>(r) * n + col]) > std::fabs(a[static_cast<std::size_t>(piv) * n + col]))
        piv = r;
    const double p = a[static_cast<std::size_t>(piv) * n + col];
    if (p == 0.0 || !std::isfinite(p)) return false;
    if (piv != col)
      for (int k = 0; k < n; ++k) {
        std::swap(a[static_cast<std::size_t>(piv) * n + k], a[static_cast<std::size_t>(col) * n + k]);
        std::swap(inv[static_cast<std::size_t>(piv) * n + k], inv[static_cast<std::size_t>(col) * n + k]);
      }
    for (int k = 0; k < n; ++k) {
      a[static_cast<std::size_t>(col) * n + k] /= p;
      inv[static_cast<std::size_t>(col) * n + k] /= p;
    }
    for (int r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = a[static_cast<std::size_t>(r) * n + col];
      if (f == 0.0) continue;
      for (int k = 0; k < n; ++k) {
        a[static_cast<std::size_t>(r) * n + k] -= f * a[static_cast<std::size_t>(col) * n + k];
        inv[static_cast<std::size_t>(r) * n + k] -= f * inv[static_cast<std::size_t>(col) * n + k];
      }
    }
  }
  a.swap(inv);
  return true;
}

double norm1(const std::vector<double>& a, int n) {
  double best = 0;
  for (int c = 0; c < n; ++c) {
    double s = 0;
    for (int r = 0; r < n; ++r) s += std::fabs(a[static_cast<std::size_t>(r) * n + c]);
    best = std::max(best, s);
  }
  return best;
}

// Qhull state, freed on every path out.
struct QhullRun {
  qhT qh;
  FILE* err = nullptr;
  char* err_text = nullptr;
  std::size_t err_size = 0;
  QhullRun() {
    err = open_memstream(&err_text, &err_size);
    qh_zero(&qh, err);
  }
  ~QhullRun() {
    int curlong = 0, totlong = 0;
    qh_freeqhull(&qh, !qh_ALL);
    qh_memfreeshort(&qh, &curlong, &totlong);
    if (err != nullptr) std::fclose(err);
    std::free(err_text);
  }
  std::string message() {
    if (err != nullptr) std::fflush(err);
    std::string m = err_text != nullptr ? std::string(err_text, err_size) : std::string();
    const auto nl = m.find('\n');
    return nl == std::string::npos ? m : m.substr(0, nl);
  }
};

}  // namespace

DelaunayInterpolator::DelaunayInterpolator(int dim, std::vector<double> points, int nvalues,
                                           std::vector<double> values)
    : dim_(dim), nvalues_(nvalues), points_(std::move(points)), values_(std::move(values)) {
  if (dim < 1 || nvalues < 1 || points_.size() % static_cast<std::size_t>(dim) != 0)
    throw std::invalid_argument("DelaunayInterpolator: bad dimensions");
  const std::size_t n = points_.size() / static_cast<std::size_t>(dim);
  if (values_.size() != n * static_cast<std::size_t>(nvalues))
    throw std::invalid_argument("DelaunayInterpolator: points and values differ in count");
  if (n < static_cast<std::size_t>(dim) + 1)
    throw std::runtime_error("Delaunay triangulation needs at least " + std::to_string(dim + 1) + " points");

  auto run = std::make_unique<QhullRun>();
  qhT* qh = &run->qh;
  // Qhull reads the points but its API takes them non-const; it copies them
  // (lifted onto the paraboloid) for a Delaunay triangulation.
  std::vector<double> copy = points_;
  char cmd[] = "qhull d Qbb Qc Qz Q12 Qt";
  const int code = qh_new_qhull(qh, dim, static_cast<int>(n), copy.data(), False, cmd, nullptr, run->err);
  if (code != 0) throw std::runtime_error("Qhull could not triangulate the points: " + run->message());

  facetT* facet;
  vertexT *vertex, **vertexp;
  FORALLfacets {
    if (facet->upperdelaunay) continue;
    Simplex s;
    bool ok = true;
    FOREACHvertex_(facet->vertices) {
      const int id = qh_pointid(qh, vertex->point);
      if (id < 0 || static_cast<std::size_t>(id) >= n) ok = false;  // the point at infinity of Qz
      s.vertex.push_back(id);
    }
    if (!ok || s.vertex.size() != static_cast<std::size_t>(dim) + 1) continue;
    // Barycentric transform: T = [v_i - v_last] (columns), coords = T^-1 (x - v_last).
    const double* last = &points_[static_cast<std::size_t>(s.vertex.back()) * dim];
    std::vector<double> t(static_cast<std::size_t>(dim) * dim);
    for (int i = 0; i < dim; ++i) {
      const double* v = &points_[static_cast<std::size_t>(s.vertex[static_cast<std::size_t>(i)]) * dim];
      for (int r = 0; r < dim; ++r) t[static_cast<std::size_t>(r) * dim + i] = v[r] - last[r];
    }
    const double tn = norm1(t, dim);
    if (!invert(t, dim)) continue;
    if (!(1.0 / (tn * norm1(t, dim)) >= kMinRcond)) continue;  // flat simplex
    s.inverse = std::move(t);
    s.lo.assign(static_cast<std::size_t>(dim), HUGE_VAL);
    s.hi.assign(static_cast<std::size_t>(dim), -HUGE_VAL);
    for (int id : s.vertex)
      for (int r = 0; r < dim; ++r) {
        const double c = points_[static_cast<std::size_t>(id) * dim + r];
        s.lo[static_cast<std::size_t>(r)] = std::min(s.lo[static_cast<std::size_t>(r)], c);
        s.hi[static_cast<std::size_t>(r)] = std::max(s.hi[static_cast<std::size_t>(r)], c);
      }
    simplices_.push_back(std::move(s));
  }
  if (simplices_.empty()) throw std::runtime_error("Delaunay triangulation has no simplex (flat point set)");
}

bool DelaunayInterpolator::barycentric(const Simplex& s, const double* x, double eps, double* c) const {
  for (int r = 0; r < dim_; ++r) {
    const double slack = eps * (1.0 + s.hi[static_cast<std::size_t>(r)] - s.lo[static_cast<std::size_t>(r)]);
    if (x[r] < s.lo[static_cast<std::size_t>(r)] - slack || x[r] > s.hi[static_cast<std::size_t>(r)] + slack)
      return false;
  }
  const double* last = &points_[static_cast<std::size_t>(s.vertex.back()) * dim_];
  double sum = 0;
  for (int i = 0; i < dim_; ++i) {
    double ci = 0;
    for (int r = 0; r < dim_; ++r) ci += s.inverse[static_cast<std::size_t>(i) * dim_ + r] * (x[r] - last[r]);
    if (!(ci >= -eps && ci <= 1.0 + eps)) return false;
    c[i] = ci;
    sum += ci;
  }
  c[dim_] = 1.0 - sum;
  return c[dim_] >= -eps && c[dim_] <= 1.0 + eps;
}

bool DelaunayInterpolator::interpolate(const double* x, double* out) const {
  std::vector<double> c(static_cast<std::size_t>(dim_) + 1);
  for (double eps : {kEps, kEpsBroad}) {
    for (const Simplex& s : simplices_) {
      if (!barycentric(s, x, eps, c.data())) continue;
      for (int k = 0; k < nvalues_; ++k) {
        double v = 0;
        for (std::size_t i = 0; i < s.vertex.size(); ++i)
          v += c[i] * values_[static_cast<std::size_t>(s.vertex[i]) * nvalues_ + k];
        out[k] = v;
      }
      return true;
    }
  }
  return false;
}

}  // namespace pollux::sim

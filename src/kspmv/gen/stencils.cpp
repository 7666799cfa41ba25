// Structured generators: 2D/3D Laplacian stencils and band matrices, built row by row.
#include <algorithm>
#include <limits>

#include "kspmv/gen/detail.hpp"
#include "kspmv/gen/generators.hpp"

namespace kspmv::gen {

using detail::build_csr;
using detail::require;

namespace {
constexpr Offset kMaxRows = std::numeric_limits<Ordinal>::max();

// 3D Laplacian on an n^3 grid; `full` selects the 27-point stencil, otherwise 7-point.
template <class S>
CsrMatrix<S> stencil3d(Ordinal n, bool full, const char* name, RowRange rows) {
  require(
      n >= 0 && double(n) * n * n <= double(kMaxRows), name,
      "n must be in [0, 1290] so that n^3 rows fit a 32-bit index (got " + std::to_string(n) + ")");
  const Offset nn = Offset(n) * n;
  const auto r = detail::resolve(rows, static_cast<Ordinal>(nn * n), name);
  const double side = 3.0 * n - 2;  // non-zeros: 27-point (3n-2)^3, 7-point 7n^3 - 6n^2
  const double nnz = n == 0 ? 0 : full ? side * side * side : 7.0 * nn * n - 6.0 * nn;
  detail::require_memory(name, r.count(), nn * n, nnz * r.share, r.share == 1, sizeof(S));
  const S diag = static_cast<S>(full ? 26 : 6);
  auto length = [=](Ordinal i) -> Offset {
    const Ordinal c[3] = {static_cast<Ordinal>(i / nn), (i / n) % n, i % n};
    Offset len = 1;  // 27-point: product of the points per axis; 7-point: 1 + the neighbours
    for (Ordinal ci : c) {
      const Offset along = 1 + (ci > 0) + (ci < n - 1);
      len = full ? len * along : len + along - 1;
    }
    return len;
  };
  auto fill = [=](Ordinal i, Ordinal* col, S* val) {
    const Ordinal z = static_cast<Ordinal>(i / nn), y = (i / n) % n, x = i % n;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (!full && (dz != 0) + (dy != 0) + (dx != 0) > 1) continue;
          if (z + dz < 0 || z + dz >= n || y + dy < 0 || y + dy >= n || x + dx < 0 || x + dx >= n)
            continue;
          *col++ = static_cast<Ordinal>(i + dz * nn + dy * n + dx);
          *val++ = (dz == 0 && dy == 0 && dx == 0) ? diag : S(-1);
        }
  };
  return build_csr<S>(r.count(), static_cast<Ordinal>(nn * n), length, fill, r.begin);
}
}  // namespace

template <class S>
CsrMatrix<S> laplace2d(Ordinal nx, Ordinal ny, RowRange range) {
  require(nx >= 0 && ny >= 0 && Offset(nx) * ny <= kMaxRows, "laplace2d",
          "nx, ny must be non-negative with nx*ny < 2^31 (got " + std::to_string(nx) + " x " +
              std::to_string(ny) + ")");
  const Offset rows = Offset(nx) * ny;
  const auto r = detail::resolve(range, static_cast<Ordinal>(rows), "laplace2d");
  detail::require_memory("laplace2d", r.count(), rows,
                         rows == 0 ? 0 : (5.0 * rows - 2.0 * nx - 2.0 * ny) * r.share, r.share == 1,
                         sizeof(S));
  auto length = [=](Ordinal i) -> Offset {
    const Ordinal x = i % nx, y = i / nx;
    return 1 + (x > 0) + (x < nx - 1) + (y > 0) + (y < ny - 1);
  };
  auto fill = [=](Ordinal i, Ordinal* col, S* val) {
    const Ordinal x = i % nx, y = i / nx;
    auto put = [&](Ordinal j, S v) { *col++ = j, *val++ = v; };
    if (y > 0) put(i - nx, S(-1));
    if (x > 0) put(i - 1, S(-1));
    put(i, S(4));
    if (x < nx - 1) put(i + 1, S(-1));
    if (y < ny - 1) put(i + nx, S(-1));
  };
  return build_csr<S>(r.count(), static_cast<Ordinal>(rows), length, fill, r.begin);
}

template <class S>
CsrMatrix<S> stencil3d_7(Ordinal n, RowRange rows) {
  return stencil3d<S>(n, false, "stencil3d_7", rows);
}

template <class S>
CsrMatrix<S> stencil3d_27(Ordinal n, RowRange rows) {
  return stencil3d<S>(n, true, "stencil3d_27", rows);
}

template <class S>
CsrMatrix<S> banded(Ordinal n, Ordinal half_bandwidth, RowRange rows) {
  require(n >= 0 && half_bandwidth >= 0, "banded",
          "n and the half bandwidth must be non-negative (got n=" + std::to_string(n) +
              ", bw=" + std::to_string(half_bandwidth) + ")");
  const auto r = detail::resolve(rows, n, "banded");
  const Ordinal w = half_bandwidth;
  const double band = std::min(w, std::max(n - 1, 0));  // n(2w+1) - w(w+1) for w < n
  detail::require_memory("banded", r.count(), n, (n * (2 * band + 1) - band * (band + 1)) * r.share,
                         r.share == 1, sizeof(S));
  const S diag = static_cast<S>(2.0 * w + 1.0);
  auto first = [=](Ordinal i) { return i - std::min(i, w); };
  auto last = [=](Ordinal i) { return i + std::min(n - 1 - i, w); };
  auto length = [=](Ordinal i) -> Offset { return Offset(last(i)) - first(i) + 1; };
  auto fill = [=](Ordinal i, Ordinal* col, S* val) {
    for (Ordinal j = first(i); j <= last(i); ++j) {
      *col++ = j;
      *val++ = j == i ? diag : detail::symmetric_value<S>(0xBA4D, i, j);
    }
  };
  return build_csr<S>(r.count(), n, length, fill, r.begin);
}

#define KSPMV_INSTANTIATE(S)                                      \
  template CsrMatrix<S> laplace2d<S>(Ordinal, Ordinal, RowRange); \
  template CsrMatrix<S> stencil3d_7<S>(Ordinal, RowRange);        \
  template CsrMatrix<S> stencil3d_27<S>(Ordinal, RowRange);       \
  template CsrMatrix<S> banded<S>(Ordinal, Ordinal, RowRange);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv::gen

// Graph generators: Graph500 R-MAT (counting sort of a symmetrized edge list, per-row sort and
// dedupe) and random geometric graphs (grid-bucketed points, neighbours within the radius).
#include <algorithm>
#include <cmath>

#include "kspmv/gen/detail.hpp"
#include "kspmv/gen/generators.hpp"

namespace kspmv::gen {

using detail::build_csr;
using detail::for_each_index;
using detail::require;
using detail::Rng;

namespace {
// Exclusive prefix sum of counts(0..n) into starts(0..n], starts(0) = 0.
void exclusive_scan(const HostView<Offset>& counts, const HostView<Offset>& starts) {
  starts(0) = 0;
  std::copy(counts.data(), counts.data() + counts.extent(0), starts.data() + 1);
  inclusive_scan(starts.data() + 1, static_cast<std::int64_t>(counts.extent(0)));
}

// Zeroes a host view on the host threads.
void zero(const HostView<Offset>& v) {
  Offset* p = v.data();
  for_each_index(static_cast<std::int64_t>(v.extent(0)), [&](std::int64_t i) { p[i] = 0; });
}
}  // namespace

template <class S>
CsrMatrix<S> kronecker(int scale, int edge_factor, std::uint64_t seed) {
  require(scale >= 1 && scale <= 30, "kronecker",
          "scale must be in [1, 30] (got " + std::to_string(scale) + ")");
  require(edge_factor >= 1 && (Offset(edge_factor) << scale) <= (Offset(1) << 34), "kronecker",
          "edge_factor must be >= 1 with edge_factor * 2^scale <= 2^34");
  const Ordinal n = Ordinal(1) << scale;
  const Offset edges = Offset(edge_factor) << scale;
  // At most 2 entries per edge; at the peak the buckets (8 bytes per edge), degree and start
  // live beside the CSR.
  detail::require_memory("kronecker", n, n, 2.0 * edges, false, sizeof(S), 8.0 * edges + 16.0 * n);
  const detail::Bijection scramble(static_cast<std::uint64_t>(n), seed);

  // 1. Edges: per level one quadrant, a=.57 b=.19 c=.19 d=.05 (16 bits of a draw per level).
  auto src = make_host_view<Ordinal>("kspmv::gen::src", edges);
  auto dst = make_host_view<Ordinal>("kspmv::gen::dst", edges);
  auto degree = make_host_view<Offset>("kspmv::gen::degree", n);
  zero(degree);
  Offset* deg = degree.data();
  for_each_index(
      edges,
      [&](std::int64_t e) {
        Rng rng(seed, static_cast<std::uint64_t>(e));
        std::uint64_t u = 0, v = 0, bits = 0;
        for (int level = 0; level < scale; ++level) {
          if (level % 4 == 0) bits = rng.next();
          const auto r = static_cast<std::uint32_t>(bits & 0xFFFF);
          bits >>= 16;
          const std::uint32_t a = 37355, ab = 49807, abc = 62259;  // .57, .76, .95 of 65536
          u = (u << 1) | (r >= ab);
          v = (v << 1) | ((r >= a && r < ab) || r >= abc);
        }
        u = scramble(u), v = scramble(v);
        if (u == v) {  // self-loop: dropped
          src(e) = -1;
          return;
        }
        src(e) = static_cast<Ordinal>(u), dst(e) = static_cast<Ordinal>(v);
        fetch_add(deg + u, 1);
        fetch_add(deg + v, 1);
      },
      0.0, 0.3);

  // 2. Counting sort of both directions into per-row buckets.
  auto start = make_host_view<Offset>("kspmv::gen::start", std::size_t(n) + 1);
  exclusive_scan(degree, start);
  auto bucket = make_host_view<Ordinal>("kspmv::gen::bucket", start(n));
  zero(degree);
  for_each_index(
      edges,
      [&](std::int64_t e) {
        const Ordinal u = src(e), v = dst(e);
        if (u < 0) return;
        bucket(start(u) + fetch_add(deg + u, 1)) = v;
        bucket(start(v) + fetch_add(deg + v, 1)) = u;
      },
      0.3, 0.5);
  src = HostView<Ordinal>(), dst = HostView<Ordinal>();  // free the edge list

  // 3. Sort and dedupe each bucket in place; its unique length becomes the row length.
  for_each_index(
      n,
      [&](std::int64_t i) {
        Ordinal* b = bucket.data() + start(i);
        std::sort(b, b + degree(i));
        degree(i) = std::unique(b, b + degree(i)) - b;
      },
      0.5, 0.7);
  auto length = [=](Ordinal i) -> Offset { return degree(i); };
  auto fill = [=](Ordinal i, Ordinal* col, S* val) {
    for (Offset k = 0; k < degree(i); ++k) {
      col[k] = bucket(start(i) + k);
      val[k] = detail::symmetric_value<S>(seed, i, col[k]);
    }
  };
  const detail::ProgressScope rows(0.7, 1.0);
  return build_csr<S>(n, n, length, fill);
}

template <class S>
CsrMatrix<S> random_geometric(int scale, std::uint64_t seed) {
  require(scale >= 1 && scale <= 30, "random_geometric",
          "scale must be in [1, 30] (got " + std::to_string(scale) + ")");
  const Ordinal n = Ordinal(1) << scale;
  const double radius = 0.55 * std::sqrt(std::log(double(n)) / n);
  const double r2 = radius * radius;
  const auto g = static_cast<Ordinal>(std::max(1.0, std::floor(1.0 / radius)));  // cells >= r
  const Offset cells = Offset(g) * g;
  // Mean degree pi r^2 (n - 1), less at the border; the points' coordinates, cells and order
  // (28 bytes each) and the cell pointers live beside the CSR.
  detail::require_memory("random_geometric", n, n,
                         std::min(std::acos(-1.0) * r2, 1.0) * n * (n - 1.0), false, sizeof(S),
                         28.0 * n + 16.0 * cells);
  auto cell_of = [=](double x, double y) {
    const auto cx = std::min<Ordinal>(g - 1, static_cast<Ordinal>(x * g));
    const auto cy = std::min<Ordinal>(g - 1, static_cast<Ordinal>(y * g));
    return Offset(cy) * g + cx;
  };

  // Points by cell: count, scan, scatter, then order each cell by point id (deterministic).
  auto count = make_host_view<Offset>("kspmv::gen::cell_count", cells);
  zero(count);
  Offset* counts = count.data();
  for_each_index(n, [&](std::int64_t p) {
    Rng rng(seed, static_cast<std::uint64_t>(p));
    const double x = rng.uniform(), y = rng.uniform();
    fetch_add(counts + cell_of(x, y), 1);
  });
  auto start = make_host_view<Offset>("kspmv::gen::cell_start", cells + 1);
  exclusive_scan(count, start);
  zero(count);
  auto order = make_host_view<Ordinal>("kspmv::gen::order", n);
  for_each_index(n, [&](std::int64_t p) {
    Rng rng(seed, static_cast<std::uint64_t>(p));
    const double x = rng.uniform(), y = rng.uniform();
    const Offset c = cell_of(x, y);
    order(start(c) + fetch_add(counts + c, 1)) = static_cast<Ordinal>(p);
  });
  auto px = make_host_view<double>("kspmv::gen::x", n);
  auto py = make_host_view<double>("kspmv::gen::y", n);
  auto pcell = make_host_view<Offset>("kspmv::gen::cell", n);
  for_each_index(cells, [&](std::int64_t c) {
    std::sort(order.data() + start(c), order.data() + start(c + 1));
    for (Offset v = start(c); v < start(c + 1); ++v) {
      Rng rng(seed, static_cast<std::uint64_t>(order(v)));
      px(v) = rng.uniform(), py(v) = rng.uniform(), pcell(v) = c;
    }
  });

  // Vertex v (cell-major number) scans the 3 x 3 cells around its own; cells are visited in
  // increasing index and hold consecutive vertex numbers, so columns come out sorted.
  auto visit = [=](Ordinal v, auto&& emit) {
    const Offset cy = pcell(v) / g, cx = pcell(v) % g;
    for (Offset y = std::max<Offset>(0, cy - 1); y <= std::min<Offset>(g - 1, cy + 1); ++y)
      for (Offset x = std::max<Offset>(0, cx - 1); x <= std::min<Offset>(g - 1, cx + 1); ++x) {
        const Offset c = y * g + x;
        for (Offset w = start(c); w < start(c + 1); ++w) {
          const double dx = px(v) - px(w), dy = py(v) - py(w);
          if (w != v && dx * dx + dy * dy <= r2) emit(static_cast<Ordinal>(w));
        }
      }
  };
  auto length = [=](Ordinal v) -> Offset {
    Offset len = 0;
    visit(v, [&](Ordinal) { ++len; });
    return len;
  };
  auto fill = [=](Ordinal v, Ordinal* col, S* val) {
    visit(v, [&](Ordinal w) { *col++ = w, *val++ = detail::symmetric_value<S>(seed, v, w); });
  };
  const detail::ProgressScope rows(0.2, 1.0);
  return build_csr<S>(n, n, length, fill);
}

#define KSPMV_INSTANTIATE(S)                                   \
  template CsrMatrix<S> kronecker<S>(int, int, std::uint64_t); \
  template CsrMatrix<S> random_geometric<S>(int, std::uint64_t);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv::gen

// The locality model of locality.hpp.
#include "kspmv/analysis/locality.hpp"

#include <algorithm>
#include <limits>

#include "kspmv/analysis/ordering.hpp"
#include "kspmv/core/parallel.hpp"
#include "kspmv/formats/column_stripes.hpp"

namespace kspmv::analysis {

namespace {

// Distinct sectors, and distinct atoms (kAtomBytes, pairs of sectors), summed over groups.
struct SectorCount {
  double sectors = 0, atoms = 0;
};

// Sums, over the sampled groups of kLocalityRows consecutive positions of [0, n), the distinct
// sectors (and atoms) that sectors_of(i, out) appends for position i, scaled to all groups.
template <class F>
SectorCount sampled_sectors(Ordinal n, const F& sectors_of) {
  if (n <= 0) return {};
  const std::int64_t groups = (std::int64_t(n) + kLocalityRows - 1) / kLocalityRows;
  const std::int64_t stride = std::max<std::int64_t>(1, groups / kLocalitySamples);
  const std::int64_t sampled = (groups + stride - 1) / stride;
  constexpr std::int64_t per_atom = kAtomBytes / kSectorBytes;
  std::int64_t sectors = 0, atoms = 0;
  parallel_blocks(sampled, 256, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::int64_t> ids;
    std::int64_t count = 0, atom_count = 0;
    for (std::int64_t s = begin; s < end; ++s) {
      const std::int64_t first = s * stride * kLocalityRows;
      const std::int64_t last = std::min<std::int64_t>(n, first + kLocalityRows);
      ids.clear();
      for (std::int64_t i = first; i < last; ++i) sectors_of(static_cast<Ordinal>(i), ids);
      std::sort(ids.begin(), ids.end());
      const auto unique_end = std::unique(ids.begin(), ids.end());
      count += unique_end - ids.begin();
      for (auto it = ids.begin(); it != unique_end; ++it)
        atom_count += it == ids.begin() || *it / per_atom != *(it - 1) / per_atom;
    }
    fetch_add(&sectors, count);
    fetch_add(&atoms, atom_count);
  });
  const double scale = double(groups) / double(sampled);
  return {double(sectors) * scale, double(atoms) * scale};
}

// x's sectors and atoms read by the groups of rows of P A P^T (x_sectors).
SectorCount x_count(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                    const std::vector<Ordinal>& perm, const std::vector<Ordinal>& inv,
                    std::size_t value_bytes) {
  const std::int64_t per_sector = std::max<std::int64_t>(1, kSectorBytes / value_bytes);
  return sampled_sectors(n, [&](Ordinal i, std::vector<std::int64_t>& out) {
    const Ordinal row = perm.empty() ? i : perm[i];
    for (Offset p = row_ptr[row]; p < row_ptr[row + 1]; ++p)
      out.push_back((inv.empty() ? col[p] : inv[col[p]]) / per_sector);
  });
}

}  // namespace

double x_sectors(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                 const std::vector<Ordinal>& perm, const std::vector<Ordinal>& inv,
                 std::size_t value_bytes) {
  return x_count(row_ptr, col, n, perm, inv, value_bytes).sectors;
}

namespace {

// The bytes of one apply besides the gathers of x: the matrix (values, 4-byte columns and row
// offsets) and y written once.
double streamed_bytes(const Offset* row_ptr, Ordinal n, std::size_t value_bytes) {
  const double nnz = n > 0 ? double(row_ptr[n]) : 0, s = double(value_bytes);
  return nnz * (s + 4) + (n + 1.0) * 4 + n * s;
}

}  // namespace

double apply_bytes(const Offset* row_ptr, const Ordinal* col, Ordinal n, std::size_t value_bytes) {
  const std::vector<Ordinal> none;
  return streamed_bytes(row_ptr, n, value_bytes) +
         kAtomCost * x_count(row_ptr, col, n, none, none, value_bytes).atoms;
}

Ordinal permute_window(Ordinal n, std::size_t value_bytes, std::size_t cache_bytes) {
  const double bytes = double(n) * double(value_bytes);
  if (cache_bytes == 0 || bytes <= cache_bytes / 2.0) return 0;
  return static_cast<Ordinal>(std::max<std::size_t>(1, cache_bytes / 8 / value_bytes));
}

ReorderEstimate estimate_reorder(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                                 const std::vector<Ordinal>& perm, const std::vector<Ordinal>& inv,
                                 std::size_t value_bytes, double before, std::size_t cache_bytes) {
  ReorderEstimate e;
  e.before = before;
  const SectorCount x = x_count(row_ptr, col, n, perm, inv, value_bytes);
  e.x_sectors = x.sectors;
  e.after = streamed_bytes(row_ptr, n, value_bytes) + kAtomCost * x.atoms;
  // Gathering x through perm reads the atoms of x[perm[i]]; scattering y writes those of
  // y[perm[i]]: each also reads perm and streams the permuted vector. In windows each streams
  // two indices, the vector in, out and through its work array, and reads its input once, at
  // kPassCost.
  const std::int64_t per_sector = std::max<std::int64_t>(1, kSectorBytes / value_bytes);
  const double s = double(value_bytes);
  const double direct =
      n * (4 + s) + kAtomCost * sampled_sectors(n, [&](Ordinal i, std::vector<std::int64_t>& out) {
                                  out.push_back(perm[i] / per_sector);
                                }).atoms;
  const Ordinal window = permute_window(n, value_bytes, cache_bytes);
  const double windowed = kPassCost * n * (8 + 4 * s);
  e.window = window > 0 && windowed < direct ? window : 0;
  e.permute = 2 * (e.window > 0 ? windowed : direct);
  return e;
}

ReorderEstimate estimate_reorder(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                                 const std::vector<Ordinal>& perm, std::size_t value_bytes,
                                 std::size_t cache_bytes) {
  return estimate_reorder(row_ptr, col, n, perm, inverse_permutation(perm), value_bytes,
                          apply_bytes(row_ptr, col, n, value_bytes), cache_bytes);
}

Ordinal stripe_columns(std::size_t cache_bytes, std::size_t value_bytes, Ordinal asked) {
  if (asked > 0) return asked;
  const std::size_t columns = cache_bytes / 3 / std::max<std::size_t>(1, value_bytes);
  return static_cast<Ordinal>(
      std::clamp<std::size_t>(columns, 1, std::numeric_limits<Ordinal>::max()));
}

StripesEstimate estimate_stripes(const Offset* row_ptr, const Ordinal* col, Ordinal m, Ordinal n,
                                 std::size_t value_bytes, Ordinal width) {
  StripesEstimate e;
  e.stripes = stripe_count(n, width);
  e.before = apply_bytes(row_ptr, col, m, value_bytes);
  const double s = double(value_bytes);
  e.after = streamed_bytes(row_ptr, m, value_bytes) +
            kPassCost * (e.stripes - 1.0) * m * (4 + 2 * s) + n * s;
  return e;
}

bool reorder_can_pay(const Offset* row_ptr, const Ordinal* col, Ordinal n, std::size_t value_bytes,
                     std::size_t cache_bytes, bool permuted, ReorderEstimate& bound) {
  // The least x an order could read (once where x stays in the cache, as A's apply does then;
  // else none at all) and the cheapest gather and scatter (perm in order; none in the permuted
  // order) against A's bytes.
  const double x_bytes = double(n) * double(value_bytes);
  const bool x_cached = cache_bytes > 0 && x_bytes <= double(cache_bytes);
  const double streamed = streamed_bytes(row_ptr, n, value_bytes);
  const std::vector<Ordinal> none;
  const SectorCount x =
      x_cached ? SectorCount{} : x_count(row_ptr, col, n, none, none, value_bytes);
  bound.x_sectors = x.sectors;
  bound.before = x_cached ? streamed + x_bytes : streamed + kAtomCost * x.atoms;
  const bool clustered =
      !x_cached && bound.x_sectors < kClusteredSectors * (n > 0 ? double(row_ptr[n]) : 0);
  bound.after = clustered ? bound.before : streamed + (x_cached ? x_bytes : 0);
  bound.permute = 2.0 * n * (4 + 2.0 * value_bytes);
  return bound.pays(permuted);
}

ReorderChoice choose_reorder(const Offset* row_ptr, const Ordinal* col, Ordinal n, Reorder asked,
                             std::size_t value_bytes, std::size_t cache_bytes, bool permuted,
                             const std::function<std::vector<Ordinal>()>& bfs) {
  ReorderChoice best;
  if (asked == Reorder::None) return best;
  if (asked == Reorder::Auto &&
      !reorder_can_pay(row_ptr, col, n, value_bytes, cache_bytes, permuted, best.estimate))
    return best;
  const Reorder r = asked == Reorder::Auto ? Reorder::Bfs : asked;
  std::vector<Ordinal> perm = r == Reorder::Rcm      ? rcm_order(row_ptr, col, n)
                              : r == Reorder::Degree ? degree_order(row_ptr, n)
                              : bfs                  ? bfs()
                                                     : bfs_order(row_ptr, col, n);
  // Past reorder_can_pay x does not fit the cache: its `before` is apply_bytes.
  const double before =
      asked == Reorder::Auto ? best.estimate.before : apply_bytes(row_ptr, col, n, value_bytes);
  best.estimate = estimate_reorder(row_ptr, col, n, perm, inverse_permutation(perm), value_bytes,
                                   before, cache_bytes);
  if (asked != Reorder::Auto || best.estimate.pays(permuted)) {
    best.reorder = r;
    best.perm = std::move(perm);
  }
  return best;
}

}  // namespace kspmv::analysis

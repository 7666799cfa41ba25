// Random generators built row by row from counter-based streams: uniform, k-mer-like,
// FullChip-like and planted long rows.
#include <algorithm>
#include <vector>

#include "kspmv/gen/detail.hpp"
#include "kspmv/gen/generators.hpp"

namespace kspmv::gen {

using detail::build_csr;
using detail::require;
using detail::Rng;

namespace {
// Insertion sort for the few columns of a generated row (std::sort draws -Warray-bounds on
// small fixed arrays).
void sort_small(Ordinal* first, Ordinal* last) {
  for (Ordinal* i = first + 1; i < last; ++i)
    for (Ordinal* j = i; j > first && j[-1] > j[0]; --j) std::swap(j[-1], j[0]);
}

// The j-th planted long row's length (with_long_rows): max(1, max_length / 2^j), at most ncols.
Offset long_row_length(int j, Ordinal max_length, Ordinal ncols) {
  return std::min<Offset>(ncols, std::max<Offset>(1, j < 31 ? max_length >> j : 0));
}
}  // namespace

template <class S>
CsrMatrix<S> uniform_random(Ordinal rows, Ordinal cols, int k, std::uint64_t seed, RowRange range) {
  require(rows >= 0 && cols >= 0 && k >= 0, "uniform_random",
          "rows, cols and k must be non-negative");
  require(rows == 0 || k <= cols, "uniform_random",
          "k = " + std::to_string(k) + " distinct columns per row do not fit in " +
              std::to_string(cols) + " columns");
  const auto r = detail::resolve(range, rows, "uniform_random");
  detail::require_memory("uniform_random", r.count(), cols, double(r.count()) * k, true, sizeof(S));
  auto length = [=](Ordinal) -> Offset { return k; };
  auto fill = [=](Ordinal i, Ordinal* col, S* val) {
    Rng rng(seed, static_cast<std::uint64_t>(i));
    detail::sample_sorted(rng, k, cols, col);
    for (int j = 0; j < k; ++j) val[j] = rng.value<S>();
  };
  return build_csr<S>(r.count(), cols, length, fill, r.begin);
}

template <class S>
CsrMatrix<S> kmer(Ordinal rows, std::uint64_t seed, RowRange range) {
  require(rows >= 2, "kmer", "needs at least 2 rows (got " + std::to_string(rows) + ")");
  const auto r = detail::resolve(range, rows, "kmer");
  // Vertex v sits at chain position sigma^-1(v). Chain edge (t, t+1) is broken with
  // probability kBreak only for odd t < rows-2, so every vertex keeps a neighbour. Branch edges
  // pair position t with t ^ mask[b] (an involution, so the graph is symmetric).
  constexpr double kBreak = 0.2, kBranch[2] = {0.2, 0.1};
  // Mean degree: 2 chain edges, half of them broken with probability kBreak, and the branches.
  detail::require_memory("kmer", r.count(), rows,
                         (2 - kBreak + kBranch[0] + kBranch[1]) * r.count(), false, sizeof(S));
  const detail::Bijection sigma(static_cast<std::uint64_t>(rows), seed);
  const auto n = static_cast<std::uint64_t>(rows);
  std::uint64_t pow2 = 1;
  while (pow2 < n) pow2 <<= 1;
  std::uint64_t mask[2];
  for (int b = 0; b < 2; ++b) mask[b] = detail::hash(seed, 0x3E7, b) & (pow2 - 1);
  const bool branch_ok[2] = {mask[0] > 1, mask[1] > 1 && mask[1] != mask[0]};

  auto neighbours = [=](Ordinal v, Ordinal* out) {
    const std::uint64_t t = sigma.inverse(static_cast<std::uint64_t>(v));
    auto chain = [&](std::uint64_t s) {  // edge (s, s+1) present?
      return s % 2 == 0 || s + 2 >= n || detail::unit(detail::hash(seed, s, 1)) >= kBreak;
    };
    int len = 0;
    if (t > 0 && chain(t - 1)) out[len++] = static_cast<Ordinal>(sigma(t - 1));
    if (t + 1 < n && chain(t)) out[len++] = static_cast<Ordinal>(sigma(t + 1));
    for (int b = 0; b < 2; ++b) {
      const std::uint64_t u = t ^ mask[b];
      if (!branch_ok[b] || u >= n || (u > t ? u - t : t - u) <= 1) continue;
      if (detail::unit(detail::hash(seed, std::min(t, u), 2 + b)) < kBranch[b])
        out[len++] = static_cast<Ordinal>(sigma(u));
    }
    sort_small(out, out + len);
    return len;
  };
  auto length = [=](Ordinal v) -> Offset {
    Ordinal buf[4];
    return neighbours(v, buf);
  };
  auto fill = [=](Ordinal v, Ordinal* col, S* val) {
    const int len = neighbours(v, col);
    for (int j = 0; j < len; ++j) val[j] = detail::symmetric_value<S>(seed, v, col[j]);
  };
  return build_csr<S>(r.count(), rows, length, fill, r.begin);
}

template <class S>
CsrMatrix<S> with_long_rows(const CsrMatrix<S>& a, int count, Ordinal max_length,
                            std::uint64_t seed) {
  return detail::plant_long_rows(a, 0, a.nrows, count, max_length, seed);
}

template <class S>
CsrMatrix<S> detail::plant_long_rows(const CsrMatrix<S>& a, Ordinal first, Ordinal total_rows,
                                     int count, Ordinal max_length, std::uint64_t seed) {
  require(first >= 0 && a.nrows <= total_rows - first, "with_long_rows",
          "the block of rows lies outside the matrix");
  require(count >= 0 && count <= total_rows, "with_long_rows",
          "count must be in [0, rows = " + std::to_string(total_rows) + "] (got " +
              std::to_string(count) + ")");
  require(count == 0 || max_length >= 1, "with_long_rows", "max_length must be at least 1");
  require(a.is_sorted_unique(), "with_long_rows", "the input must have sorted, unique columns");
  double added = 0;  // the planted lengths, an upper bound on the entries added
  for (int j = 0; j < count; ++j) added += long_row_length(j, max_length, a.ncols);
  detail::require_memory("with_long_rows", a.nrows, a.ncols, double(a.nnz()) + added, false,
                         sizeof(S), 12.0 * count);

  // Which rows, and how long each becomes (halving lengths, shuffled over the chosen rows).
  Rng rng(seed, 0x10E6);
  auto planted = make_host_view<Ordinal>("kspmv::gen::planted", count);
  auto target = make_host_view<Offset>("kspmv::gen::target", count);
  detail::sample_sorted(rng, count, total_rows, planted.data());
  for (int j = 0; j < count; ++j) target(j) = long_row_length(j, max_length, a.ncols);
  for (int j = count - 1; j > 0; --j) std::swap(target(j), target(rng.below(j + 1)));
  for (int j = 0; j < count; ++j) {
    const Ordinal local = planted(j) - first;
    if (local >= 0 && local < a.nrows) target(j) = std::max(target(j), a.row_length(local));
  }

  const auto rp = a.row_ptr;
  const auto ac = a.col_idx;
  const auto av = a.values;
  const Ordinal ncols = a.ncols;
  auto find = [=](Ordinal i) -> int {  // index into planted, or -1
    const Ordinal* p = std::lower_bound(planted.data(), planted.data() + count, i);
    return p != planted.data() + count && *p == i ? static_cast<int>(p - planted.data()) : -1;
  };
  auto length = [=](Ordinal i) -> Offset {  // i: the global row
    const int j = find(i);
    return j < 0 ? rp(i - first + 1) - rp(i - first) : target(j);
  };
  auto fill = [=](Ordinal i, Ordinal* col, S* val) {
    const Ordinal* oc = ac.data() + rp(i - first);
    const S* ov = av.data() + rp(i - first);
    const Offset p = rp(i - first + 1) - rp(i - first);
    const int j = find(i);
    if (j < 0) {
      std::copy(oc, oc + p, col);
      std::copy(ov, ov + p, val);
      return;
    }
    // Sample `need` of the ncols - p columns the row lacks into col[p..), map each to the
    // column it names (skipping the row's own), then merge with the row's entries from the front.
    const Offset need = target(j) - p;
    Rng r(seed, static_cast<std::uint64_t>(i) + 1);
    Ordinal* fresh = col + p;
    detail::sample_sorted(r, need, ncols - p, fresh);
    Offset q = 0;
    for (Offset t = 0; t < need; ++t) {
      while (q < p && oc[q] <= fresh[t] + q) ++q;
      fresh[t] = static_cast<Ordinal>(fresh[t] + q);
    }
    Offset io = 0, in = 0;
    for (Offset w = 0; w < p + need; ++w) {
      if (in == need || (io < p && oc[io] < fresh[in])) {
        col[w] = oc[io];
        val[w] = ov[io++];
      } else {
        col[w] = fresh[in++];
        val[w] = r.value<S>();
      }
    }
  };
  return build_csr<S>(a.nrows, a.ncols, length, fill, first);
}

template <class S>
CsrMatrix<S> fullchip_like(Ordinal rows, std::uint64_t seed, RowRange range) {
  require(rows >= 1, "fullchip_like", "needs at least 1 row (got " + std::to_string(rows) + ")");
  const auto r = detail::resolve(range, rows, "fullchip_like");
  constexpr int kMaxBase = 12;
  // The base has about 7.5 entries per row (1 + 2..11 extra, few duplicates) and stays alive
  // while the long rows (at most 2 * rows / 1.3 entries) are planted into a copy.
  const double base_nnz = 7.5 * r.count();
  detail::require_memory("fullchip_like", r.count(), rows, base_nnz + 2.0 * rows / 1.3, false,
                         sizeof(S),
                         8.0 * (r.count() + 1.0) + base_nnz * (sizeof(Ordinal) + sizeof(S)));
  // Row i: the diagonal and 2..11 more columns, each within +-32 of i or anywhere (even odds).
  auto columns = [=](Ordinal i, Ordinal* out) {
    Rng rng(seed, static_cast<std::uint64_t>(i));
    const int extra = 2 + static_cast<int>(rng.below(10));
    out[0] = i;
    for (int e = 1; e <= extra; ++e) {
      if (rng.below(2) == 0) {
        const Offset c = Offset(i) + static_cast<Offset>(rng.below(65)) - 32;
        out[e] = static_cast<Ordinal>(std::clamp<Offset>(c, 0, rows - 1));
      } else {
        out[e] = static_cast<Ordinal>(rng.below(static_cast<std::uint64_t>(rows)));
      }
    }
    sort_small(out, out + extra + 1);
    return static_cast<int>(std::unique(out, out + extra + 1) - out);
  };
  auto length = [=](Ordinal i) -> Offset {
    Ordinal buf[kMaxBase];
    return columns(i, buf);
  };
  auto fill = [=](Ordinal i, Ordinal* col, S* val) {
    Ordinal buf[kMaxBase];
    const int len = columns(i, buf);
    Rng rng(seed ^ 0xF0C4, static_cast<std::uint64_t>(i));
    for (int j = 0; j < len; ++j) col[j] = buf[j], val[j] = rng.value<S>();
  };
  const auto base = [&] {
    const detail::ProgressScope part(0.0, 0.5);
    return build_csr<S>(r.count(), rows, length, fill, r.begin);
  }();
  const auto longest = std::max<Ordinal>(1, static_cast<Ordinal>(rows / 1.3));
  const detail::ProgressScope part(0.5, 1.0);
  return detail::plant_long_rows(base, r.begin, rows, std::min<Ordinal>(8, rows), longest,
                                 detail::hash(seed, 0xF011));
}

#define KSPMV_INSTANTIATE(S)                                                                   \
  template CsrMatrix<S> uniform_random<S>(Ordinal, Ordinal, int, std::uint64_t, RowRange);     \
  template CsrMatrix<S> kmer<S>(Ordinal, std::uint64_t, RowRange);                             \
  template CsrMatrix<S> with_long_rows<S>(const CsrMatrix<S>&, int, Ordinal, std::uint64_t);   \
  template CsrMatrix<S> detail::plant_long_rows<S>(const CsrMatrix<S>&, Ordinal, Ordinal, int, \
                                                   Ordinal, std::uint64_t);                    \
  template CsrMatrix<S> fullchip_like<S>(Ordinal, std::uint64_t, RowRange);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv::gen

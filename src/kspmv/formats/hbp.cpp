// HBP host preprocessing (paper 3, Sec. III): sampling of the hash, Alg. 2, the per-block
// reordering (hash, or the sort2D / DP2D baselines of Sec. IV-B) and the format conversion.
#include "kspmv/formats/hbp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv {

namespace {

constexpr Ordinal kSampleRows = 2048;

Ordinal col_blocks(Ordinal n, const HbpParams& p) {
  return static_cast<Ordinal>((Offset(n) + p.block_cols - 1) / p.block_cols);
}

// The columns (and values) of every row in non-decreasing column order: `a` itself when it
// is already so, else a copy with each row stably sorted.
template <class Scalar>
struct SortedRows {
  std::vector<Ordinal> col;
  std::vector<Scalar> val;
  const Ordinal* c = nullptr;
  const Scalar* v = nullptr;

  explicit SortedRows(const CsrPointers<Scalar>& a) : c(a.col), v(a.val) {
    if (hbp_rows_sorted(a.row_ptr, a.col, a.m)) return;
    const Offset nnz = a.nnz();
    col.resize(nnz);
    val.resize(nnz);
    std::vector<Offset> order;
    for (Ordinal i = 0; i < a.m; ++i) {
      order.resize(a.row_ptr[i + 1] - a.row_ptr[i]);
      std::iota(order.begin(), order.end(), a.row_ptr[i]);
      std::stable_sort(order.begin(), order.end(),
                       [&](Offset x, Offset y) { return a.col[x] < a.col[y]; });
      for (std::size_t k = 0; k < order.size(); ++k) {
        col[a.row_ptr[i] + k] = a.col[order[k]];
        val[a.row_ptr[i] + k] = a.val[order[k]];
      }
    }
    c = col.data();
    v = val.data();
  }
};

// Calls f(block_col, first, count) for each run of row entries [begin, end) in one block column.
template <class F>
void for_each_run(const Ordinal* col, Offset begin, Offset end, Ordinal block_cols, F f) {
  for (Offset k = begin; k < end;) {
    const Ordinal bn = col[k] / block_cols;
    const Offset lo = Offset(bn) * block_cols, hi = lo + block_cols;  // one division per run
    Offset e = k + 1;
    while (e < end && col[e] >= lo && col[e] < hi) ++e;
    f(bn, k, static_cast<int>(e - k));
    k = e;
  }
}

}  // namespace

bool hbp_rows_sorted(const Offset* row_ptr, const Ordinal* col, Ordinal m) {
  for (Ordinal i = 0; i < m; ++i)
    if (!std::is_sorted(col + row_ptr[i], col + row_ptr[i + 1])) return false;
  return true;
}

void check_hbp_params(const HbpParams& p) {
  if (p.block_rows < kHbpWarp || p.block_rows > 1024 || p.block_rows % kHbpWarp != 0)
    throw InvalidArgument("hbp: block_rows must be a multiple of 32 in [32, 1024], got " +
                          std::to_string(p.block_rows));
  if (p.block_cols < 1 || p.block_cols > 65536)
    throw InvalidArgument("hbp: block_cols must be in [1, 65536], got " +
                          std::to_string(p.block_cols));
  if (!(p.fixed_fraction >= 0 && p.fixed_fraction <= 1))
    throw InvalidArgument("hbp: fixed_fraction must be in [0, 1]");
}

Ordinal hbp_sample_step(Ordinal m) {
  return std::max<Ordinal>(1, m / kSampleRows);
}

HbpHash hbp_sample_hash(const Offset* row_ptr, const Ordinal* col, Ordinal m, Ordinal n,
                        const HbpParams& p) {
  check_hbp_params(p);
  Offset histogram[kHbpMaxShift + 1] = {};
  const auto add = [&](Ordinal, Offset, int count) { ++histogram[hbp_shift_needed(count)]; };
  std::vector<Ordinal> bns;
  const Ordinal step = hbp_sample_step(m);
  for (Ordinal i = 0; i < m && n > 0; i += step) {
    const Offset begin = row_ptr[i], end = row_ptr[i + 1];
    if (std::is_sorted(col + begin, col + end)) {  // the usual case: one division per block
      for_each_run(col, begin, end, p.block_cols, add);
      continue;
    }
    bns.clear();
    for (Offset k = begin; k < end; ++k) bns.push_back(col[k] / p.block_cols);
    std::sort(bns.begin(), bns.end());
    for_each_run(bns.data(), 0, static_cast<Offset>(bns.size()), 1, add);
  }
  return hbp_hash_from_shifts(histogram, p);
}

HbpHash hbp_hash_from_shifts(const Offset* histogram, const HbpParams& p) {
  HbpHash h;
  h.spread = p.block_rows / 9;
  Offset total = 0;
  for (int a = 0; a <= kHbpMaxShift; ++a) total += histogram[a];
  const Offset need = (total * 9 + 9) / 10;  // >= 90%
  for (Offset covered = histogram[0]; h.shift < kHbpMaxShift && covered < need;)
    covered += histogram[++h.shift];
  h.fine = std::min(1 << h.shift, h.spread);
  return h;
}

Offset hbp_table_slots(const Offset* row_ptr, const Ordinal* col, Ordinal m, Ordinal n,
                       const HbpParams& p) {
  check_hbp_params(p);
  std::vector<Ordinal> stamp(col_blocks(n, p), -1);
  Offset blocks = 0;
  for (Ordinal i = 0; i < m; ++i) {
    const Ordinal bm = i / p.block_rows;
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      Ordinal& s = stamp[col[k] / p.block_cols];
      if (s != bm) s = bm, ++blocks;
    }
  }
  return blocks * p.block_rows;
}

HbpSplit hbp_split(Ordinal blocks, Ordinal warps, double fixed_fraction) {
  HbpSplit s;
  if (blocks <= 0 || warps <= 0) return s;
  s.per_warp = static_cast<Ordinal>(std::floor(fixed_fraction * blocks / warps));
  s.fixed = s.per_warp * warps;
  return s;
}

template <class Scalar>
HbpMatrix<Scalar> build_hbp(const CsrPointers<Scalar>& a, const HbpParams& p, const HbpHash& hash,
                            HbpReorder reorder) {
  check_hbp_params(p);
  HbpMatrix<Scalar> h;
  h.nrows = a.m;
  h.ncols = a.n;
  h.params = p;
  h.hash = hash;
  const SortedRows<Scalar> rows(a);
  const Ordinal N = p.block_rows, M = p.block_cols, G = h.groups();
  const Ordinal R = h.row_blocks(), C = col_blocks(a.n, p);

  // Non-empty blocks, schedule order (block column major), and the combine lists.
  std::vector<Ordinal> stamp(C, -1), per_col(std::size_t(C) + 1, 0);
  std::vector<std::pair<Ordinal, Ordinal>> found;  // (block col, block row), block row order
  for (Ordinal bm = 0; bm < R; ++bm) {
    for (Ordinal i = bm * N; i < std::min(a.m, (bm + 1) * N); ++i) {
      for_each_run(rows.c, a.row_ptr[i], a.row_ptr[i + 1], M, [&](Ordinal bn, Offset, int) {
        if (stamp[bn] != bm) found.emplace_back(bn, bm), stamp[bn] = bm, ++per_col[bn + 1];
      });
    }
  }
  if (found.size() * std::size_t(N) > std::size_t(std::numeric_limits<Ordinal>::max()))
    throw UnsupportedError("hbp: " + std::to_string(found.size()) + " blocks of " +
                           std::to_string(N) + " rows do not fit 32-bit table indices");
  const Ordinal B = static_cast<Ordinal>(found.size());
  std::partial_sum(per_col.begin(), per_col.end(), per_col.begin());
  h.block_row.resize(B);
  h.block_col.resize(B);
  for (const auto& [bn, bm] : found) {  // stable by block column: block rows stay ascending
    const Ordinal id = per_col[bn]++;
    h.block_row[id] = bm;
    h.block_col[id] = bn;
  }
  h.combine_ptr.assign(std::size_t(R) + 1, 0);
  for (Ordinal b = 0; b < B; ++b) ++h.combine_ptr[h.block_row[b] + 1];
  std::partial_sum(h.combine_ptr.begin(), h.combine_ptr.end(), h.combine_ptr.begin());
  h.combine_block.resize(B);
  {
    std::vector<Ordinal> next(h.combine_ptr.begin(), h.combine_ptr.end() - 1);
    for (Ordinal b = 0; b < B; ++b) h.combine_block[next[h.block_row[b]]++] = b;
  }
  const auto block_id = [&](Ordinal bm, Ordinal bn) {
    const Ordinal* first = h.combine_block.data() + h.combine_ptr[bm];
    const Ordinal* last = h.combine_block.data() + h.combine_ptr[bm + 1];
    return *std::lower_bound(first, last, bn,
                             [&](Ordinal b, Ordinal v) { return h.block_col[b] < v; });
  };

  // Alg. 2: the non-zero count and first entry of every row in every block.
  const std::size_t slots = std::size_t(B) * N;
  std::vector<int> count(slots, 0);
  std::vector<Offset> first(slots, 0);
  for (Ordinal i = 0; i < a.m; ++i) {
    const Ordinal bm = i / N;
    for_each_run(rows.c, a.row_ptr[i], a.row_ptr[i + 1], M, [&](Ordinal bn, Offset k, int c) {
      const std::size_t s = std::size_t(block_id(bm, bn)) * N + (i - bm * N);
      count[s] = c;
      first[s] = k;
    });
  }

  // Reordering (Sec. III-B), then the conversion, block by block.
  h.output_hash.resize(slots);
  h.zero_row.resize(slots);
  h.begin_nnz.resize(std::size_t(B) * G + 1);
  h.col.resize(a.nnz());
  h.data.resize(a.nnz());
  h.add_sign.resize(a.nnz());
  std::vector<int> offs(N), sorted(N), dp(std::size_t(N) + 1);
  std::vector<std::uint16_t> order(N);
  Offset pos = 0;
  for (Ordinal b = 0; b < B; ++b) {
    const int* cnt = count.data() + std::size_t(b) * N;
    if (reorder == HbpReorder::Hash) {  // counting placement by hash value, ties by row
      std::fill(offs.begin(), offs.end(), 0);
      for (Ordinal t = 0; t < N; ++t) ++offs[hbp_hash(hash, cnt[t])];
      std::exclusive_scan(offs.begin(), offs.end(), offs.begin(), 0);
      for (Ordinal t = 0; t < N; ++t) order[offs[hbp_hash(hash, cnt[t])]++] = t;
    } else {
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](std::uint16_t x, std::uint16_t y) { return cnt[x] < cnt[y]; });
    }
    if (reorder == HbpReorder::Dp) {  // Regu2D: groups of <= 32 sorted rows, least padding
      for (Ordinal t = 0; t < N; ++t) sorted[t] = cnt[order[t]];
      dp[0] = 0;
      for (Ordinal i = 1; i <= N; ++i) {
        dp[i] = std::numeric_limits<int>::max();
        for (Ordinal j = std::max(0, i - kHbpWarp); j < i; ++j)
          dp[i] = std::min(dp[i], dp[j] + (i - j) * sorted[i - 1]);
      }
      h.dp_padded_nnz += dp[N];
    }
    std::copy(order.begin(), order.end(), h.output_hash.begin() + std::size_t(b) * N);
    const Ordinal col_base = h.block_col[b] * M;
    for (Ordinal g = 0; g < G; ++g) {
      h.begin_nnz[std::size_t(b) * G + g] = pos;
      int c[kHbpWarp], max_c = 0, zeros = 0;
      for (int l = 0; l < kHbpWarp; ++l) {
        const std::size_t slot = std::size_t(b) * N + g * kHbpWarp + l;
        c[l] = cnt[order[g * kHbpWarp + l]];
        h.zero_row[slot] = static_cast<std::int8_t>(c[l] == 0 ? -1 : zeros);
        zeros += c[l] == 0;
        max_c = std::max(max_c, c[l]);
      }
      // Column-major within the group: step k holds the k-th element of each longer row.
      for (int k = 0; k < max_c; ++k) {
        int active = 0, next_rank[kHbpWarp], nexts = 0;
        for (int l = 0; l < kHbpWarp; ++l) {
          next_rank[l] = nexts;
          nexts += c[l] > k + 1;
          active += c[l] > k;
        }
        for (int l = 0, rank = 0; l < kHbpWarp; ++l) {
          if (c[l] <= k) continue;
          const Offset src = first[std::size_t(b) * N + order[g * kHbpWarp + l]] + k;
          const Offset dst = pos + rank;
          h.col[dst] = static_cast<std::uint16_t>(rows.c[src] - col_base);
          h.data[dst] = rows.v[src];
          h.add_sign[dst] =
              static_cast<std::int8_t>(c[l] > k + 1 ? active - rank + next_rank[l] : -1);
          ++rank;
        }
        pos += active;
      }
    }
  }
  h.begin_nnz.back() = pos;
  return h;
}

template <class Scalar>
HbpBalance hbp_balance(const HbpMatrix<Scalar>& h) {
  HbpBalance r;
  const Ordinal N = h.params.block_rows, G = h.groups();
  std::vector<int> at(N), local(N);
  const auto variance = [](const int* c) {
    double mean = 0, sq = 0;
    for (int l = 0; l < kHbpWarp; ++l) mean += c[l];
    mean /= kHbpWarp;
    for (int l = 0; l < kHbpWarp; ++l) sq += (c[l] - mean) * (c[l] - mean);
    return sq / kHbpWarp;
  };
  for (Ordinal b = 0; b < h.blocks(); ++b) {
    const std::size_t base = std::size_t(b) * N;
    for (Ordinal p = 0; p < N; ++p) {  // the row at position p: follow its add_sign chain
      const int z = h.zero_row[base + p];
      int c = 0;
      if (z >= 0) {
        Offset j = h.begin_nnz[std::size_t(b) * G + p / kHbpWarp] + p % kHbpWarp - z;
        for (c = 1; h.add_sign[j] > 0; ++c) j += h.add_sign[j];
      }
      at[p] = c;
      local[h.output_hash[base + p]] = c;
    }
    for (Ordinal g = 0; g < G; ++g) {
      r.before += variance(local.data() + g * kHbpWarp);
      r.after += variance(at.data() + g * kHbpWarp);
    }
    r.groups += G;
  }
  if (r.groups > 0)
    r.before = std::sqrt(r.before / r.groups), r.after = std::sqrt(r.after / r.groups);
  return r;
}

template HbpMatrix<float> build_hbp(const CsrPointers<float>&, const HbpParams&, const HbpHash&,
                                    HbpReorder);
template HbpMatrix<double> build_hbp(const CsrPointers<double>&, const HbpParams&, const HbpHash&,
                                     HbpReorder);
template HbpBalance hbp_balance(const HbpMatrix<float>&);
template HbpBalance hbp_balance(const HbpMatrix<double>&);

}  // namespace kspmv

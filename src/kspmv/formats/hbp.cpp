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
// is already so, else a copy with each row stably sorted; with `positions`, also where each
// sorted entry lies in `a`.
template <class Scalar>
struct SortedRows {
  std::vector<Ordinal> col;
  std::vector<Scalar> val;
  std::vector<Offset> pos;  // empty: entry k is a's entry k
  const Ordinal* c = nullptr;
  const Scalar* v = nullptr;

  SortedRows(const CsrPointers<Scalar>& a, bool positions) : c(a.col), v(a.val) {
    if (hbp_rows_sorted(a.row_ptr, a.col, a.m)) return;
    const Offset nnz = a.nnz();
    col.resize(nnz);
    val.resize(nnz);
    if (positions) pos.resize(nnz);
    std::vector<Offset> order;
    for (Ordinal i = 0; i < a.m; ++i) {
      order.resize(a.row_ptr[i + 1] - a.row_ptr[i]);
      std::iota(order.begin(), order.end(), a.row_ptr[i]);
      std::stable_sort(order.begin(), order.end(),
                       [&](Offset x, Offset y) { return a.col[x] < a.col[y]; });
      for (std::size_t k = 0; k < order.size(); ++k) {
        col[a.row_ptr[i] + k] = a.col[order[k]];
        val[a.row_ptr[i] + k] = a.val[order[k]];
        if (positions) pos[a.row_ptr[i] + k] = order[k];
      }
    }
    c = col.data();
    v = val.data();
  }
  Offset position(Offset k) const { return pos.empty() ? k : pos[k]; }
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
  std::vector<Ordinal> stamp(col_blocks(n, p), -1);  // the last row seen in each block column
  Offset pairs = 0;
  for (Ordinal i = 0; i < m; ++i) {
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      Ordinal& s = stamp[col[k] / p.block_cols];
      if (s != i) s = i, ++pairs;
    }
  }
  return pairs;
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
                            HbpReorder reorder, std::vector<Offset>* sources) {
  check_hbp_params(p);
  HbpMatrix<Scalar> h;
  h.nrows = a.m;
  h.ncols = a.n;
  h.params = p;
  h.hash = hash;
  const SortedRows<Scalar> rows(a, sources != nullptr);
  const Ordinal N = p.block_rows, M = p.block_cols, C = col_blocks(a.n, p);
  const auto for_each_pair = [&](Ordinal i, auto f) {
    for_each_run(rows.c, a.row_ptr[i], a.row_ptr[i + 1], M, f);
  };

  // Alg. 2: the runs of a row's entries in one block column are its (row, block) pairs, in
  // row-major order; pair q holds the entries [first[q], first[q + 1]).
  h.combine_ptr.assign(std::size_t(a.m) + 1, 0);
  Offset pairs = 0;
  for (Ordinal i = 0; i < a.m; ++i) {
    for_each_pair(i, [&](Ordinal, Offset, int) { ++pairs; });
    if (pairs > std::numeric_limits<Ordinal>::max())
      throw UnsupportedError(
          "hbp: more than 2^31 - 1 (row, block) pairs do not fit 32-bit table "
          "indices");
    h.combine_ptr[i + 1] = static_cast<Ordinal>(pairs);
  }
  const Ordinal S = static_cast<Ordinal>(pairs);
  std::vector<Offset> first(std::size_t(S) + 1);
  for (Ordinal i = 0; i < a.m; ++i) {
    Ordinal q = h.combine_ptr[i];
    for_each_pair(i, [&](Ordinal, Offset k, int) { first[q++] = k; });
  }
  first[S] = a.nnz();

  // The blocks in schedule order: the pairs bucketed by block column, stably (block rows
  // ascending in each); a block is a bucket's run of one block row. output_hash holds each
  // block's pairs, rows ascending, until the reordering; block_begin the blocks' sizes, then
  // their scan. The blocks are found block row by block row (by_row).
  std::vector<Ordinal> stamp(C, -1), pair_at(std::size_t(C) + 1, 0), block_at(pair_at);
  const auto for_each_bucketed = [&](auto f) {  // f(pair, block column, block row, new block)
    std::fill(stamp.begin(), stamp.end(), -1);
    for (Ordinal i = 0; i < a.m; ++i) {
      for (Ordinal q = h.combine_ptr[i]; q < h.combine_ptr[i + 1]; ++q) {
        const Ordinal bn = rows.c[first[q]] / M, bm = i / N;
        f(q, bn, bm, stamp[bn] != bm);
        stamp[bn] = bm;
      }
    }
  };
  for_each_bucketed([&](Ordinal, Ordinal bn, Ordinal, bool fresh) {
    ++pair_at[bn + 1];
    block_at[bn + 1] += fresh;
  });
  std::partial_sum(pair_at.begin(), pair_at.end(), pair_at.begin());
  std::partial_sum(block_at.begin(), block_at.end(), block_at.begin());
  const Ordinal B = block_at[C];
  h.block_row.resize(B);
  h.block_col.resize(B);
  h.table_ptr.resize(std::size_t(B) + 1);
  std::vector<Offset> block_begin(std::size_t(B) + 1, 0);
  h.output_hash.resize(S);
  std::vector<Ordinal> by_row;
  by_row.reserve(B);
  for_each_bucketed([&](Ordinal q, Ordinal bn, Ordinal bm, bool fresh) {
    const Ordinal slot = pair_at[bn]++;
    h.output_hash[slot] = q;
    if (fresh) {
      const Ordinal b = block_at[bn]++;
      h.block_row[b] = bm;
      h.block_col[b] = bn;
      h.table_ptr[b] = slot;
      by_row.push_back(b);
    }
    block_begin[block_at[bn]] += first[q + 1] - first[q];  // the size of block block_at[bn] - 1
  });
  h.table_ptr[B] = S;
  std::partial_sum(block_begin.begin(), block_begin.end(), block_begin.begin());
  h.group_ptr.assign(std::size_t(B) + 1, 0);
  for (Ordinal b = 0; b < B; ++b)
    h.group_ptr[b + 1] =
        h.group_ptr[b] + (h.table_ptr[b + 1] - h.table_ptr[b] + kHbpWarp - 1) / kHbpWarp;
  h.begin_nnz.assign(std::size_t(h.group_ptr[B]) + 1, a.nnz());

  // Reordering (Sec. III-B), then the conversion, block by block in block row order: the
  // pairs and entries a block reads lie in its block row's stretch of the CSR.
  h.col.resize(a.nnz());
  h.data.resize(a.nnz());
  h.add_sign.resize(a.nnz());
  if (sources) sources->resize(a.nnz());
  std::vector<int> cnt(N), key(N), offs(N), sorted(N), dp(std::size_t(N) + 1);
  std::vector<Ordinal> placed(N);
  std::vector<std::uint16_t> order(N);
  for (const Ordinal b : by_row) {
    Ordinal* table = h.output_hash.data() + h.table_ptr[b];
    const Ordinal k = h.table_ptr[b + 1] - h.table_ptr[b];  // rows with entries, <= N
    for (Ordinal t = 0; t < k; ++t)
      cnt[t] = static_cast<int>(first[table[t] + 1] - first[table[t]]);
    if (reorder == HbpReorder::Hash) {  // counting placement by hash value, ties by row
      int lo = N, hi = 0;  // counting over the block's range of values: O(k) on sparse blocks
      for (Ordinal t = 0; t < k; ++t) {
        key[t] = hbp_hash(hash, cnt[t]);
        lo = std::min(lo, key[t]);
        hi = std::max(hi, key[t]);
      }
      std::fill(offs.begin(), offs.begin() + (hi - lo + 1), 0);
      for (Ordinal t = 0; t < k; ++t) ++offs[key[t] - lo];
      std::exclusive_scan(offs.begin(), offs.begin() + (hi - lo + 1), offs.begin(), 0);
      for (Ordinal t = 0; t < k; ++t) order[offs[key[t] - lo]++] = t;
    } else {
      std::iota(order.begin(), order.begin() + k, 0);
      std::stable_sort(order.begin(), order.begin() + k,
                       [&](std::uint16_t x, std::uint16_t y) { return cnt[x] < cnt[y]; });
    }
    if (reorder == HbpReorder::Dp) {  // Regu2D: groups of <= 32 sorted rows, least padding
      for (Ordinal t = 0; t < k; ++t) sorted[t] = cnt[order[t]];
      dp[0] = 0;
      for (Ordinal i = 1; i <= k; ++i) {
        dp[i] = std::numeric_limits<int>::max();
        for (Ordinal j = std::max(0, i - kHbpWarp); j < i; ++j)
          dp[i] = std::min(dp[i], dp[j] + (i - j) * sorted[i - 1]);
      }
      h.dp_padded_nnz += dp[k];
    }
    for (Ordinal t = 0; t < k; ++t) placed[t] = table[order[t]];
    std::copy(placed.begin(), placed.begin() + k, table);
    Offset pos = block_begin[b];
    const Ordinal col_base = h.block_col[b] * M;
    for (Ordinal g0 = 0; g0 < k; g0 += kHbpWarp) {  // a warp group: table slots g0 + lane
      h.begin_nnz[h.group_ptr[b] + g0 / kHbpWarp] = pos;
      int c[kHbpWarp], max_c = 0;
      for (int l = 0; l < kHbpWarp; ++l) {
        c[l] = g0 + l < k ? cnt[order[g0 + l]] : 0;
        max_c = std::max(max_c, c[l]);
      }
      // Column-major within the group: step j holds the j-th element of each longer row.
      for (int j = 0; j < max_c; ++j) {
        int active = 0, next_rank[kHbpWarp], nexts = 0;
        for (int l = 0; l < kHbpWarp; ++l) {
          next_rank[l] = nexts;
          nexts += c[l] > j + 1;
          active += c[l] > j;
        }
        for (int l = 0, rank = 0; l < kHbpWarp; ++l) {
          if (c[l] <= j) continue;
          const Offset src = first[table[g0 + l]] + j;
          const Offset dst = pos + rank;
          h.col[dst] = static_cast<std::uint16_t>(rows.c[src] - col_base);
          h.data[dst] = rows.v[src];
          if (sources) (*sources)[dst] = rows.position(src);
          h.add_sign[dst] =
              static_cast<std::int8_t>(c[l] > j + 1 ? active - rank + next_rank[l] : -1);
          ++rank;
        }
        pos += active;
      }
    }
  }
  return h;
}

template <class Scalar>
HbpBalance hbp_balance(const HbpMatrix<Scalar>& h) {
  HbpBalance r;
  const Ordinal N = h.params.block_rows;
  std::vector<Ordinal> pair_row(h.slots());
  for (Ordinal i = 0; i < h.nrows; ++i)
    std::fill(pair_row.begin() + h.combine_ptr[i], pair_row.begin() + h.combine_ptr[i + 1], i);
  std::vector<int> at(N), local(N);
  const auto variance = [](const int* c) {
    double mean = 0, sq = 0;
    for (int l = 0; l < kHbpWarp; ++l) mean += c[l];
    mean /= kHbpWarp;
    for (int l = 0; l < kHbpWarp; ++l) sq += (c[l] - mean) * (c[l] - mean);
    return sq / kHbpWarp;
  };
  for (Ordinal b = 0; b < h.blocks(); ++b) {
    const Ordinal t0 = h.table_ptr[b], k = h.table_ptr[b + 1] - t0;
    std::fill(at.begin(), at.end(), 0);  // the paper's table: the empty rows first
    std::fill(local.begin(), local.end(), 0);
    for (Ordinal g0 = 0; g0 < k; g0 += kHbpWarp) {  // count each lane's add_sign chain
      const Offset j0 = h.begin_nnz[h.group_ptr[b] + g0 / kHbpWarp];
      for (Ordinal s = g0; s < std::min(k, g0 + kHbpWarp); ++s) {
        int c = 1;
        for (Offset j = j0 + (s - g0); h.add_sign[j] > 0; j += h.add_sign[j]) ++c;
        at[N - k + s] = c;
        local[pair_row[h.output_hash[t0 + s]] - h.block_row[b] * N] = c;
      }
    }
    for (Ordinal g = 0; g < N / kHbpWarp; ++g) {
      r.before += variance(local.data() + g * kHbpWarp);
      r.after += variance(at.data() + g * kHbpWarp);
    }
    r.groups += N / kHbpWarp;
  }
  if (r.groups > 0)
    r.before = std::sqrt(r.before / r.groups), r.after = std::sqrt(r.after / r.groups);
  return r;
}

template HbpMatrix<float> build_hbp(const CsrPointers<float>&, const HbpParams&, const HbpHash&,
                                    HbpReorder, std::vector<Offset>*);
template HbpMatrix<double> build_hbp(const CsrPointers<double>&, const HbpParams&, const HbpHash&,
                                     HbpReorder, std::vector<Offset>*);
template HbpBalance hbp_balance(const HbpMatrix<float>&);
template HbpBalance hbp_balance(const HbpMatrix<double>&);

}  // namespace kspmv

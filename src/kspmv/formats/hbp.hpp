// HBP, the hash-based 2D-partitioned format (paper 3): the matrix cut into blocks of
// block_rows x block_cols; in each block the rows are reordered by a nonlinear hash of their
// non-zero count so that the 32 rows of a warp group have similar lengths. Kokkos-free: the host
// kernel and the CUDA backend (whose GPU preprocessing produces the same arrays) share it.
#pragma once

#include <cstdint>
#include <vector>

#include "kspmv/core/csr_pointers.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

constexpr int kHbpWarp = 32;  // rows of a warp group

struct HbpParams {
  Ordinal block_rows = 512;      // N (Sec. III-A): a multiple of 32 in [32, 1024]
  Ordinal block_cols = 4096;     // M (Sec. III-A): the x segment of a block, in [1, 65536]
  double fixed_fraction = 0.75;  // share of the blocks statically assigned (Sec. III-C)
};
// Throws InvalidArgument for sizes outside the ranges above or a fraction outside [0, 1].
void check_hbp_params(const HbpParams& p);

// The nonlinear hash of a row's non-zero count in a block (Sec. III-B, Fig. 3):
// aggregation g = min(nnz >> a, 8), dispersion g * b, and a linear mapping of the count's
// offset in its aggregation interval onto c fine slots (the paper's example uses a modulo and
// allows other maps; this one keeps the hash monotone in nnz, so a hash order never mixes
// long and short rows: rows past the interval of 8 take the last slot). a and c come from
// sampling the matrix, b from block_rows.
struct HbpHash {
  int shift = 0;   // a
  int fine = 1;    // c, 1 <= c <= b
  int spread = 1;  // b = block_rows / 9: the nine aggregated values fill the table
};
// constexpr: the CUDA preprocessing calls it on the device (--expt-relaxed-constexpr).
constexpr int hbp_hash(const HbpHash& h, int nnz) {
  const int aggregated = (nnz >> h.shift) < 8 ? (nnz >> h.shift) : 8;
  const int linear = ((nnz - (aggregated << h.shift)) * h.fine) >> h.shift;
  return aggregated * h.spread + (linear < h.fine ? linear : h.fine - 1);  // < block_rows
}
// Sec. III-B: a is the smallest shift that maps >= 90% of the non-empty block rows of up to
// 2048 evenly spaced sample rows into 0..8; c = min(2^a, b) (exact counts below 9 * 2^a when
// 2^a <= b). Columns of a row may be unsorted.
HbpHash hbp_sample_hash(const Offset* row_ptr, const Ordinal* col, Ordinal m, Ordinal n,
                        const HbpParams& p);
// The pieces of that sampling, shared with the GPU's (which samples inside its Alg. 2 pass):
// the sampled rows are 0, step, 2 * step, ... with step = hbp_sample_step(m); each non-empty
// block row of theirs adds one to bin hbp_shift_needed(count) of a histogram of
// kHbpMaxShift + 1 bins, from which hbp_hash_from_shifts takes a and c.
constexpr int kHbpMaxShift = 16;
Ordinal hbp_sample_step(Ordinal m);
constexpr int hbp_shift_needed(int count) {  // the smallest a <= 16 with (count >> a) <= 8
  int a = 0;
  while (a < kHbpMaxShift && (count >> a) > 8) ++a;
  return a;
}
HbpHash hbp_hash_from_shifts(const Offset* histogram, const HbpParams& p);

// True when the columns of every row are non-decreasing (what the GPU preprocessing needs).
bool hbp_rows_sorted(const Offset* row_ptr, const Ordinal* col, Ordinal m);

// Table slots of the HBP form of a CSR (any column order): its (row, block) pairs with entries,
// at most nnz; the size of output_hash and the partial results, in O(nnz + columns / block_cols).
Offset hbp_table_slots(const Offset* row_ptr, const Ordinal* col, Ordinal m, Ordinal n,
                       const HbpParams& p);

// How the rows of a block are reordered: the paper's hash, or the two baselines of its
// Sec. IV-B: sort2D (stable sort by non-zero count) and DP2D (the sort, then Regu2D's dynamic
// programming over the sorted rows, which chooses groups of <= 32 rows minimizing padded work).
// Our warp groups are fixed at 32 rows, so DP2D's row order is the sorted one; its groups are
// computed (the cost of the method) and their padded work returned in HbpMatrix::dp_padded_nnz.
enum class HbpReorder { Hash, Sort, Dp };

template <class Scalar>
struct HbpMatrix {
  Ordinal nrows = 0, ncols = 0;
  HbpParams params;
  HbpHash hash;
  // Non-empty blocks only, in schedule order: block column major, then block row, so that
  // consecutive blocks share their x segment (Sec. III-C).
  std::vector<Ordinal> block_row, block_col;
  // The table (Sec. III-A) lists, for each block, only its rows with entries in it: block b has
  // slots [table_ptr[b], table_ptr[b + 1]) in execution (hash) order, in warp groups of 32 (the
  // last one may be short), so the table is bounded by nnz. The paper's lists all block_rows
  // rows of every block (rows x column blocks slots) and marks the empty ones in zero_row; with
  // no empty row in a group, lane l's first element is the group's first + l and zero_row, 0
  // throughout, is not stored.
  std::vector<Ordinal> table_ptr;  // blocks + 1
  // Block b's warp groups are [group_ptr[b], group_ptr[b + 1]); group g of it holds the table
  // slots table_ptr[b] + 32 * (g - group_ptr[b]) + lane and its elements start at begin_nnz[g]
  // (Alg. 3's begin_ptr, indexed by block and warp group; the last entry is nnz).
  std::vector<Ordinal> group_ptr;  // blocks + 1
  std::vector<Offset> begin_nnz;   // groups + 1
  // nnz entries, block by block, group by group (each group's elements after the previous
  // group's), column-major within a group (the k-th element of every row of the group that
  // has one, in table order):
  std::vector<std::uint16_t> col;  // column - block_col * block_cols
  std::vector<Scalar> data;
  std::vector<std::int8_t> add_sign;  // distance to the row's next element, -1 at its last
  // By table slot, the row's position before the hash transformation, where its partial
  // result goes: the index of its (row, block) pair among all pairs with entries in row-major
  // order (row, then block column).
  std::vector<Ordinal> output_hash;
  // Combine part: the pairs (partial results) of row i are [combine_ptr[i], combine_ptr[i + 1]).
  std::vector<Ordinal> combine_ptr;  // nrows + 1
  Offset dp_padded_nnz = 0;          // DP2D only: the padded work of its optimal groups

  Ordinal blocks() const { return static_cast<Ordinal>(block_row.size()); }
  Ordinal groups() const {
    return begin_nnz.empty() ? 0 : static_cast<Ordinal>(begin_nnz.size() - 1);
  }
  Offset slots() const { return static_cast<Offset>(output_hash.size()); }
  Offset nnz() const { return begin_nnz.empty() ? 0 : begin_nnz.back(); }
  std::size_t bytes() const {
    return (block_row.size() + block_col.size() + table_ptr.size() + group_ptr.size() +
            output_hash.size() + combine_ptr.size()) *
               sizeof(Ordinal) +
           begin_nnz.size() * sizeof(Offset) + col.size() * sizeof(std::uint16_t) +
           data.size() * sizeof(Scalar) + add_sign.size();
  }
};

// Host preprocessing (the reference of the GPU's): Alg. 2 (the first entry and non-zero count of
// every row in every block: the pairs), the blocks in schedule order, the reordering, then the
// format conversion (Sec. III-B); O(nnz + rows + columns / block_cols) time and memory. `hash`
// is used by HbpReorder::Hash only. With `sources`, also where each element comes from:
// (*sources)[e] is the position in `a` (CSR order) of data[e], what a refresh of the values
// gathers through. Throws InvalidArgument for bad params, UnsupportedError when the table does
// not fit an Ordinal.
template <class Scalar>
HbpMatrix<Scalar> build_hbp(const CsrPointers<Scalar>& a, const HbpParams& p, const HbpHash& hash,
                            HbpReorder reorder = HbpReorder::Hash,
                            std::vector<Offset>* sources = nullptr);

// The fixed/competitive split (Sec. III-C) for `warps` workers: each takes per_warp
// consecutive blocks in schedule order (blocks [w * per_warp, (w + 1) * per_warp)); blocks
// [fixed, blocks) are taken one at a time by an atomic ticket.
struct HbpSplit {
  Ordinal per_warp = 0;
  Ordinal fixed = 0;
};
HbpSplit hbp_split(Ordinal blocks, Ordinal warps, double fixed_fraction);

// Paper 3, Fig. 6: the standard deviation of the non-zero counts of the 32 rows of each warp
// group over the warp groups of the stored blocks (root of the mean variance, which sorting the
// rows can never increase; a plain mean of the deviations can), with the rows in their original
// order (before) and in table order (after), over the paper's table of block_rows rows per
// block: its empty rows (which ours does not store) first, as the lowest hash value.
struct HbpBalance {
  double before = 0, after = 0;
  Offset groups = 0;
};
template <class Scalar>
HbpBalance hbp_balance(const HbpMatrix<Scalar>& h);

extern template HbpMatrix<float> build_hbp(const CsrPointers<float>&, const HbpParams&,
                                           const HbpHash&, HbpReorder, std::vector<Offset>*);
extern template HbpMatrix<double> build_hbp(const CsrPointers<double>&, const HbpParams&,
                                            const HbpHash&, HbpReorder, std::vector<Offset>*);
extern template HbpBalance hbp_balance(const HbpMatrix<float>&);
extern template HbpBalance hbp_balance(const HbpMatrix<double>&);

}  // namespace kspmv

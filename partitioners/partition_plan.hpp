// Host-only partitioners: a CSR row pointer (or a CSC column pointer) in, a PartitionPlan out.
// A plan says which rows / non-zeros each device computes, on which stream slot, and whether its
// y rows are sent (Owned) or computed by every device (Redundant). Nothing here allocates device
// memory or reads values; Kokkos-free so that the CUDA multi-device executor consumes it directly.
#pragma once

#include <vector>

#include "kspmv/core/options.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv::part {

// Owned: the block's y rows belong to its device (sent to the others when y is all-gathered).
// Redundant: every device computes the same rows and nothing is sent.
enum class Role { Owned, Redundant };

// One piece of work for one device. Row-based schemes: nnz range == row_ptr[row_begin..row_end].
// pCSR/pCOO: the nnz range may start or end inside a row; rows [row_begin, row_end) are the rows
// it touches, and start_flag says that row_begin is shared with the previous partition (its y is
// a partial sum). pCSC: the nnz range is in CSC order, [col_begin, col_end) the columns it
// touches (start_flag: col_begin shared), rows [0, nrows) (its partial y is full length).
// Rows-based blocks span all columns: col_begin = 0, col_end = ncols. Empty blocks are allowed.
struct Block {
  Ordinal row_begin = 0, row_end = 0;
  Offset nnz_begin = 0, nnz_end = 0;
  Ordinal col_begin = 0, col_end = 0;
  int device = 0;
  int stream_slot = 0;  // 2NZ: 0/1 = first/second half; LRA: 0 short, 1 long; LRA+RC: 2 redundant;
                        // NZ in chunks: the chunk
  Role role = Role::Owned;
  bool start_flag = false;

  Ordinal rows() const { return row_end - row_begin; }
  Offset nnz() const { return nnz_end - nnz_begin; }
};

// Stream slots an executor drives per device (Block::stream_slot < kMaxStreamSlots).
inline constexpr int kMaxStreamSlots = 16;

struct PartitionPlan {
  Scheme scheme = Scheme::NZ;
  Ordinal nrows = 0, ncols = 0;
  Offset nnz = 0;
  int ndevices = 1;
  std::vector<Block> blocks;  // every device has the same number of blocks, one per stream slot
  double d_l = 0, d_c = 0;    // LRA / LRA+RC parameters used (0 for other schemes)
};

struct PartitionOptions {
  Scheme scheme = Scheme::NZ;
  int ndevices = 1;
  // LRA / LRA+RC row fractions; < 0 picks the Table 3 default by mean nnz/row (table3_defaults).
  // m_l = floor(d_l*m) long rows, m_c = round(d_c*m) redundant rows (see partition_plan.cpp).
  double d_l = -1, d_c = -1;
  // NZ: each device's rows cut again into this many contiguous blocks of ~equal non-zeros, one
  // per stream slot, so that an exchange hides under the kernels (§3.2's transfer hiding, deeper):
  // a block's copies after its kernel cross while the next block's kernel runs, and a block that
  // reads no x entry another device sends runs while they cross. 1..kMaxStreamSlots.
  int chunks = 1;
  // LRA / LRA+RC: the first row holding the most non-zeros when the caller knows it (row
  // statistics computed on the device, analysis::RowStats::longest_row); < 0: a scan of row_ptr
  // finds it.
  Ordinal longest_row = -1;
};

// Table 3 of Gao et al. 2024, midpoints of the ranges over their three platforms:
// mean nnz/row < 8: LRA d_l = 0.50, LRA+RC d_l = 0.375, d_c = 0.20;
// mean nnz/row >= 8: LRA d_l = 0.325, LRA+RC d_l = 0.30, d_c = 0.025.
struct LraParams {
  double d_l, d_c;
};
LraParams table3_defaults(Scheme s, double mean_nnz_per_row);

// What the online tuner tries (Table 3 ranges; the paper tunes d_l, d_c in the first
// iterations): the Table 3 default first, then the ends of the ranges. LRA, mean < 8: d_l in
// {0.50, 0.40, 0.60}; mean >= 8: {0.325, 0.25, 0.40}. LRA+RC, mean < 8: (d_l, d_c) in
// {(0.375, 0.20), (0.35, 0.15), (0.40, 0.25), (0.35, 0.25), (0.40, 0.15)}; mean >= 8:
// {(0.30, 0.025), (0.25, 0.0), (0.35, 0.05), (0.25, 0.05), (0.35, 0.0)}. Other schemes: none.
std::vector<LraParams> tuning_candidates(Scheme s, double mean_nnz_per_row);

// Partitions the m x n CSR matrix whose row pointer (m + 1 entries) is row_ptr. Reads only
// row_ptr: O(ndevices log m), plus O(m) for the longest-row search of LRA and LRA+RC unless
// PartitionOptions::longest_row gives it.
// Throws InvalidArgument for ndevices < 1, d_l or d_c outside [0, 1] or d_l + d_c > 1, chunks
// outside [1, kMaxStreamSlots] or above 1 for a scheme other than NZ, and for Scheme::PCSC (use
// partition_pcsc). More devices than rows gives empty blocks.
PartitionPlan partition(const Offset* row_ptr, Ordinal m, Ordinal n, const PartitionOptions& opt);

// MSREP pCSC (Alg. 4): col_ptr has n + 1 entries; the nnz ranges refer to CSC order.
PartitionPlan partition_pcsc(const Offset* col_ptr, Ordinal m, Ordinal n, int ndevices);

// Throws InvalidArgument, naming `who`, unless `p` was made for an m x n matrix of nnz non-zeros
// and every block lies inside it: its lines (rows; pCSC: columns, `ptr` then being the column
// pointer) hold its non-zero range and its stream slot is one the executors drive.
void check_plan(const PartitionPlan& p, const Offset* ptr, Ordinal m, Ordinal n, Offset nnz,
                const char* who);

// Boundaries b_0 = r0 <= b_1 <= ... <= b_parts = r1 of `parts` contiguous row blocks of [r0, r1)
// with ~equal non-zeros: b_k is the row boundary whose row_ptr is nearest to the k-th target
// (ties to the lower row). Each block has at most ceil(nnz/parts) + (longest row) non-zeros.
std::vector<Ordinal> split_nz(const Offset* row_ptr, Ordinal r0, Ordinal r1, int parts);

}  // namespace kspmv::part

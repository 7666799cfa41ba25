// Host preprocessing of CSR-Partial-Overlap and CSR-Full-Overlap (Zeng & Zou 2023, Sec. 4):
// batches, long rows and big batches computed from row_ptr alone. Kokkos-free: the CUDA
// backend and the host twin (backends/kokkos/batched_csr_spmv) share it.
#pragma once

#include <array>
#include <vector>

#include "kspmv/core/types.hpp"

namespace kspmv {

struct BatchParams {
  // Most non-zeros of one batch (Alg. 3). A CUDA block holds two stages of a batch's values and
  // column indices in shared memory: 1024 -> 2 * 1024 * (8 + 4) B = 24 KiB in double, so eight
  // 256-thread blocks (the 2048 threads of an H100 SM) fit in its 228 KiB of shared memory.
  Offset max_batch_size = 1024;
  // Most rows of one batch. Not in Alg. 3, which bounds only non-zeros: without it a run of
  // empty rows would form one huge batch walked by a single block.
  Ordinal max_batch_rows = 1024;
  // Table 2: a batch whose mean non-zeros per row is below vector_switch[k] (first such k) gets
  // 2^k threads per row; 32 threads at or above the last switch point. Non-decreasing.
  std::array<double, 5> vector_switch = {17, 34, 64, 122, 216};
  // Number of big batches of CSR-Full-Overlap (Alg. 7/8): the non-zeros are cut into big
  // batches of about nnz / big_batches. The paper uses 2 on an A40; more hide a larger share of
  // the kernels behind the copies (only the last big batch's follow them).
  int big_batches = 8;
  // The most non-zeros and rows of one big batch, 0 for no limit beyond nnz / big_batches: the
  // capacity of a slot of the streamed ring (full_overlap.hpp), so that a matrix larger than the
  // device streams through a few slots. At least max_batch_size and max_batch_rows.
  Offset big_batch_nnz = 0;
  Ordinal big_batch_rows = 0;
};

// The most non-zeros of a big batch whatever the parameters: offsets within one stay 32-bit.
inline constexpr Offset kMaxBigBatchNnz = Offset(1) << 30;

// Rows [row_begin, row_end), non-zeros [nnz_begin, nnz_end) = [row_ptr[row_begin],
// row_ptr[row_end]) <= max_batch_size, computed with vector_size threads per row.
struct BatchInfo {
  Ordinal row_begin, row_end;
  Offset nnz_begin, nnz_end;
  int vector_size;
};

// One big batch of CSR-Full-Overlap (Alg. 7): the non-zeros [nnz_begin, nnz_end) that one copy
// sends, what one slot of the streamed ring holds. The paper cuts equal sizes and lets the later
// big batch run a batch that straddles two; a ring slot must hold whole batches, so the cuts fall
// between batches (sizes differ by less than a batch), and inside long rows, whose chunks are
// summed where they lie. Batches [batch_begin, batch_end) lie inside the range and cover rows
// [row_begin, row_end) (row_begin == row_end when there are none; long rows between them are
// inside too): their kernels read row_ptr[row_begin..row_end]. Long rows
// long_rows[long_begin, long_end) have non-zeros in the range: the first may have begun in an
// earlier big batch, the last may go on in later ones.
struct BigBatchInfo {
  Offset nnz_begin, nnz_end;
  Ordinal batch_begin, batch_end;
  Ordinal long_begin, long_end;
  Ordinal row_begin, row_end;
};

// Batches and long rows together cover every row exactly once, in row order; big batches tile
// [0, nnz) in order, each at most the big-batch size (about nnz / big_batches, at most
// big_batch_nnz and kMaxBigBatchNnz, at least the largest batch), spanning at most
// big_batch_rows rows; each batch lies in exactly one, and every long row's non-zeros are in
// consecutive ones.
struct BatchPlan {
  std::vector<BatchInfo> batches;
  std::vector<Ordinal> long_rows;  // rows with more than max_batch_size non-zeros, ascending
  std::vector<BigBatchInfo> big_batches;
};

// Throws InvalidArgument unless max_batch_size >= 1, max_batch_rows >= 1, big_batches >= 1,
// vector_switch is non-decreasing and big_batch_nnz and big_batch_rows are 0 or hold a batch.
void validate(const BatchParams& params);

// Threads per row (1, 2, ..., 32) of a batch of `rows` (>= 1) rows and `nnz` non-zeros (Alg. 6).
int batch_vector_size(Offset nnz, Ordinal rows, const BatchParams& params);

// Alg. 3 (batches, long rows), Alg. 6 (vector sizes) and Alg. 7 (big batches) on a CSR row
// pointer of m + 1 entries.
BatchPlan make_batch_plan(const Offset* row_ptr, Ordinal m, const BatchParams& params);

// Alg. 7 again: plan.big_batches cut anew for `params` (e.g. the size of a ring slot), the
// batches and long rows of `plan` kept.
void cut_big_batches(const Offset* row_ptr, Ordinal m, const BatchParams& params, BatchPlan& plan);

// The least C that cut_big_batches takes for `plan` under `params` as big_batch_nnz and
// big_batch_rows both (one capacity, a ring slot's): a big batch holds the widest batch,
// max_batch_size non-zeros and max_batch_rows rows.
Offset smallest_big_batch(const BatchPlan& plan, const BatchParams& params);

}  // namespace kspmv

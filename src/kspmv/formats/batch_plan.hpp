// Host preprocessing of CSR-Partial-Overlap and CSR-Full-Overlap (Zeng & Zou 2023, Sec. 4):
// batches, long rows and big batches computed from row_ptr alone. Kokkos-free: the CUDA
// backend and the host twin (backends/host/batched_csr_spmv) share it.
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
  // Number of big batches of CSR-Full-Overlap (Alg. 7/8). The paper uses 2 on an A40; more hide
  // a larger share of the kernels behind the copies (only the last big batch's follow them).
  int big_batches = 8;
};

// Rows [row_begin, row_end), non-zeros [nnz_begin, nnz_end) = [row_ptr[row_begin],
// row_ptr[row_end]) <= max_batch_size, computed with vector_size threads per row.
struct BatchInfo {
  Ordinal row_begin, row_end;
  Offset nnz_begin, nnz_end;
  int vector_size;
};

// One stream of CSR-Full-Overlap. It copies non-zeros [nnz_begin, nnz_end) (equal sizes, the last
// may be shorter) and runs the batches [batch_begin, batch_end) and long rows
// long_rows[long_begin, long_end) whose LAST non-zero lies in its copy range (a batch or long row
// straddling big batches is run by the later one; one without non-zeros by the big batch holding
// the non-zero just before it, or by the first big batch). These cover the contiguous rows
// [row_begin, row_end), so its kernels read row_ptr[row_begin..row_end] and non-zeros
// [row_ptr[row_begin], row_ptr[row_end]), which the copies of big batches wait_begin..itself hold.
struct BigBatchInfo {
  Offset nnz_begin, nnz_end;
  Ordinal batch_begin, batch_end;
  Ordinal long_begin, long_end;
  Ordinal row_begin, row_end;
  int wait_begin;
};

// Batches and long rows together cover every row exactly once, in row order; big batches cover
// every batch and long row exactly once, in order, and their copy ranges tile [0, nnz).
struct BatchPlan {
  std::vector<BatchInfo> batches;
  std::vector<Ordinal> long_rows;  // rows with more than max_batch_size non-zeros, ascending
  std::vector<BigBatchInfo> big_batches;
};

// Throws InvalidArgument unless max_batch_size >= 1, max_batch_rows >= 1, big_batches >= 1 and
// vector_switch is non-decreasing.
void validate(const BatchParams& params);

// Threads per row (1, 2, ..., 32) of a batch of `rows` (>= 1) rows and `nnz` non-zeros (Alg. 6).
int batch_vector_size(Offset nnz, Ordinal rows, const BatchParams& params);

// Alg. 3 (batches, long rows), Alg. 6 (vector sizes) and Alg. 7 (big batches) on a CSR row
// pointer of m + 1 entries.
BatchPlan make_batch_plan(const Offset* row_ptr, Ordinal m, const BatchParams& params);

}  // namespace kspmv

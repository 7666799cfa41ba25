// The streamed ring of CSR-Full-Overlap (Zeng & Zou 2023, Sec. 4.2, Alg. 7/8, with a ring of
// device buffers in place of a device copy of the whole matrix): what each big batch needs once it
// has landed in a slot, its row pointers, batches and long-row chunks rebased to its first
// non-zero, so that 32-bit offsets index a matrix of any size. Host-only, Kokkos-free.
#pragma once

#include <cstdint>
#include <vector>

#include "kspmv/formats/batch_plan.hpp"
#include "kspmv/formats/long_rows.hpp"

namespace kspmv {

struct StreamPlan {
  std::vector<BigBatchInfo> big_batches;  // the plan's
  // Big batch g's row pointers row_ptr[row_begin..row_end] less its nnz_begin are
  // local_row_ptr[slice_begin[g], slice_begin[g + 1]) (none when it has no batches).
  std::vector<Offset> slice_begin;          // big batches + 1
  std::vector<std::int32_t> local_row_ptr;  // at most m + big batches entries
  // plan.batches, rows relative to the row_begin of their big batch, non-zeros to its nnz_begin.
  std::vector<BatchInfo> batches;
  // The long rows cut into chunks of at most chunk_nnz that never cross a big batch, offsets
  // relative to the nnz_begin of the big batch that holds them. Big batch g sums chunks
  // [chunk_begin[g], chunk_begin[g + 1]) and finishes the long rows
  // long_rows.rows[finish_begin[g], finish_begin[g + 1]), those whose last non-zero it holds.
  LongRowPlan long_rows;
  std::vector<Ordinal> chunk_begin;   // big batches + 1
  std::vector<Ordinal> finish_begin;  // big batches + 1
  Offset max_nnz = 0;                 // the most non-zeros of a big batch: what a slot holds
  Ordinal max_rows = 0;  // the most rows of a big batch's batches (row_end - row_begin)
};

// The stream plan of `plan` (make_batch_plan of the same row pointer). InvalidArgument when
// chunk_nnz < 1.
StreamPlan make_stream_plan(const Offset* row_ptr, const BatchPlan& plan, Offset chunk_nnz);

}  // namespace kspmv

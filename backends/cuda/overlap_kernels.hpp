// Kernels shared by CSR-Partial-Overlap and CSR-Full-Overlap (Zeng & Zou 2023): the batch kernel
// (Alg. 4-6: two shared-memory stages filled by asynchronous copies, the paper's memcpy_async
// pipeline as cp.async commit groups, while the block computes the other one, a vector of 1..32
// threads per row chosen per batch). Long rows (Alg. 9) go to the
// shared long-row path (long_rows.hpp), which spreads one row over many warps.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "kspmv/core/types.hpp"
#include "kspmv/formats/batch_plan.hpp"

namespace kspmv::cuda::overlap {

// A BatchInfo with device offsets: O is the offset type of the matrix the batches index
// (DeviceOffset or Offset, DeviceCsr::wide; the streamed ring's slots always take DeviceOffset).
template <class O>
struct DeviceBatch {
  Ordinal row_begin, row_end;
  O nnz_begin, nnz_end;
  int vector_size;
};

// The batches with their offsets as O (the caller checked that they fit).
template <class O>
std::vector<DeviceBatch<O>> device_batches(const std::vector<BatchInfo>& batches);

// Where the kernels read the matrix: row_ptr[i] for every row i they run, col[k] and val[k] for
// their non-zeros k in [0, nnz).
template <class S, class O>
struct MatrixRefs {
  const O* row_ptr;
  const Ordinal* col;
  const S* val;
  O nnz;
};

template <class S, class O>
class Kernels {
 public:
  // Sizes the two shared-memory stages for batches of at most max_batch_size non-zeros on the
  // current device; throws InvalidArgument when they do not fit in a block's shared memory.
  explicit Kernels(Offset max_batch_size);

  // Alg. 4: runs batches[0, count) (device array) with y = alpha*A*x + beta*y on their rows.
  void run_batches(const DeviceBatch<O>* batches, int count, const MatrixRefs<S, O>& a, S alpha,
                   const S* x, S beta, S* y, cudaStream_t stream) const;
  std::size_t shared_bytes() const { return shared_bytes_; }

 private:
  int val_capacity_ = 0;  // elements of one stage's values (batch + alignment slack)
  int col_capacity_ = 0;
  std::size_t shared_bytes_ = 0;
  int resident_blocks_ = 0;  // batch-kernel blocks the whole device holds at once
  int sm_count_ = 0;
};

}  // namespace kspmv::cuda::overlap

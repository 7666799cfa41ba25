// Multi-vector SpMV (SpMM) on one GPU: Y = alpha*A*X + beta*Y for k vectors stored column-major
// (Kokkos LayoutLeft), X(j, c) = x[j + c*ldx] and Y(i, c) = y[i + c*ldy]. CSR-Vector (paper 4
// Alg. 5/6, csr_vector.hpp) with one accumulator per vector: a group of V lanes reads each
// (column, value) of its row once for a pass of up to kMaxVectorsPerPass = 8 vectors (the kernel
// is templated on the pass width, so the sums stay in registers); k > 8 runs ceil(k/8) passes
// over A, 8 columns each. Every call only enqueues on the stream it is given: no allocation, no
// synchronisation, no other stream, so it can be captured in a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/device_spmv.hpp"
#include "backends/cuda/long_rows.hpp"

namespace kspmv::cuda {

// Enqueues Y = alpha*A*X + beta*Y on `stream` with `lanes` threads per row (1, 2, 4, 8, 16 or 32,
// e.g. resolve_csr_vector_config's vector_size); `a`, x and y on the current device; the row
// pointer of 32 (DeviceOffset) or 64 (Offset) bits. There is no
// long-row path here: every row is reduced by one group of `lanes` threads, so a row of L
// non-zeros takes L/lanes dependent steps of one group (one 1e6-entry row makes the whole launch
// wait on one warp); CsrSpmm spreads such rows over many warps. beta == 0 overwrites Y (NaN
// included); alpha == 0 reads neither A nor X (Y = beta*Y); k == 0 or a.m == 0 does nothing.
// Throws InvalidArgument for k < 0, ldx < a.n, ldy < a.m, a null x or y that would be read or
// written, or a lane count not listed above.
template <class S, class O>
void csr_spmm(const CsrPointers<S, O>& a, S alpha, const S* x, std::size_t ldx, S beta, S* y,
              std::size_t ldy, int k, cudaStream_t stream, int lanes);

// csr_spmm planned once for one uploaded matrix, as make_csr_vector plans CSR-Vector: the lanes
// per row and long-row threshold of resolve_csr_vector_config(config), and the rows longer than
// the threshold on the long-row path (long_rows.hpp: 1024-entry chunks, one warp each, each
// chunk read once per pass of up to 8 vectors), the others by the csr_spmm kernel, which skips
// them. Device memory beyond `a` (extra_device_bytes()): the long-row plan and its work buffer,
// 8 sums per chunk. The work buffer is shared by the passes of a run and by successive runs:
// one run at a time per object (runs on one stream are ordered, so that is the usual case).
template <class S>
class CsrSpmm {
 public:
  // `host_row_ptr`: a's row pointer on the host (a->m + 1 entries), for the row statistics and
  // the long-row plan. InvalidArgument for a null matrix or row pointer, a row pointer that is
  // not a's (its last entry differs from a->nnz) or a bad config.
  CsrSpmm(std::shared_ptr<const DeviceCsr<S>> a, const Offset* host_row_ptr,
          CsrVectorConfig config = {});
  // For a matrix that lives on the device only (e.g. transpose()): copies a's row pointer to the
  // host once (synchronous; 12 (m + 1) bytes of host memory for the time of the call).
  explicit CsrSpmm(std::shared_ptr<const DeviceCsr<S>> a, CsrVectorConfig config = {});

  // Enqueues Y = alpha*A*X + beta*Y on `stream`; the semantics and errors of csr_spmm.
  void run(S alpha, const S* x, std::size_t ldx, S beta, S* y, std::size_t ldy, int k,
           cudaStream_t stream);

  int lanes() const { return lanes_; }
  Offset long_row_threshold() const { return threshold_; }
  Ordinal long_rows() const { return long_rows_.rows(); }
  std::size_t extra_device_bytes() const { return long_rows_.device_bytes(); }

 private:
  std::shared_ptr<const DeviceCsr<S>> a_;
  int lanes_;
  Offset threshold_;
  LongRowPath<S> long_rows_;
};

}  // namespace kspmv::cuda

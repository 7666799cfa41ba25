// The long-row path: rows with many non-zeros (1e4..1e6, R-MAT hubs, dense rows) computed by
// many warps each (cf. paper 4 Alg. 9, one block per long row, here several warps per row so a
// 1e6-nnz row is spread over the whole GPU). Reusable by every kernel family that takes long
// rows out of its main kernel: build a LongRowPath from the row list, call run() after (or
// before) the main kernel on the same stream, or run its chunks inside the main kernel
// (chunks(), long_rows.cuh); either writes exactly the listed rows of y, once. It
// also serves several vectors at once (csr_spmm): each chunk's entries are read once for up to
// kMaxVectorsPerPass vectors.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/operator_impl.hpp"
#include "kspmv/formats/long_rows.hpp"

namespace kspmv::cuda {

// Non-zeros one warp reduces in the long-row path (32 per lane) of the kernels that launch it
// apart (csr_spmm, the overlap kernels); CSR-Vector's chunks follow its longest row
// (kspmv::long_row_chunk_nnz).
inline constexpr Offset kLongRowChunkNnz = 1024;

// The most vectors one multi-vector pass keeps in registers (k accumulators per thread): the
// long-row path's and csr_spmm's (spmm.hpp) pass width.
inline constexpr int kMaxVectorsPerPass = 8;

// LongRowPath::chunks(): its device arrays. `arrivals` is zero between launches: the finishing
// warp resets its row's count.
template <class Scalar>
struct LongRowChunks {
  const Offset* chunk_begin = nullptr;
  const Offset* chunk_end = nullptr;
  const Ordinal* chunk_row = nullptr;  // per chunk: its row's index in `rows`
  const Ordinal* rows = nullptr;
  const Ordinal* first_chunk = nullptr;  // rows + 1
  Scalar* partial = nullptr;             // per chunk
  unsigned* arrivals = nullptr;          // per row
  Ordinal nchunks = 0;
};

template <class Scalar>
class LongRowPath {
 public:
  LongRowPath() = default;
  // `rows`: the long rows (ascending, any subset of [0, m)); `host_row_ptr`: the matrix's host
  // row pointer (m + 1). Uploads the chunk plan (kspmv::plan_long_rows) to the current device.
  // `max_vectors` (1..kMaxVectorsPerPass): the most vectors one run takes; the work buffer holds
  // that many sums per chunk. InvalidArgument when it is out of range. `stream`: null uploads
  // synchronously, another enqueues the upload there without waiting.
  LongRowPath(const Offset* host_row_ptr, Ordinal m, std::vector<Ordinal> rows,
              Offset chunk_nnz = kLongRowChunkNnz, int max_vectors = 1,
              cudaStream_t stream = nullptr);
  // The same from a plan already made (plan_long_row_extents, e.g. from rows found on the
  // device: row_profile.hpp), its chunk offsets into the col and val arrays that run() or
  // sum_chunks() is given (the streamed ring's: relative to the slot that holds the chunk).
  explicit LongRowPath(const LongRowPlan& plan, int max_vectors = 1, cudaStream_t stream = nullptr);

  Ordinal rows() const { return nrows_; }
  // Enqueues y[r] = alpha*A(r,:)*x + beta*y[r] for every listed row r on `stream`; no other
  // entry of y is touched. col and val are the matrix's entries on the device (the chunks'
  // offsets index them; 64-bit). alpha == 0 reads no A. Per-chunk warp sums into a work buffer,
  // then one warp per row adds its chunks in order (deterministic): for one vector in a single
  // launch (long_rows.cuh) where every listed row has a chunk, else in two. The work buffer and
  // the arrival counts are owned: one run at a time per object.
  void run(const Ordinal* col, const Scalar* val, Scalar alpha, const Scalar* x, Scalar beta,
           Scalar* y, cudaStream_t stream) const {
    run(col, val, alpha, x, 0, beta, y, 0, 1, stream);
  }
  // The same for k vectors in column-major storage, X(j, c) = x[j + c*ldx] and Y(i, c) =
  // y[i + c*ldy], 1 <= k <= max_vectors (InvalidArgument otherwise): Y(r, c) for every listed
  // row r and c < k, each chunk's entries read once for all k.
  void run(const Ordinal* col, const Scalar* val, Scalar alpha, const Scalar* x, std::size_t ldx,
           Scalar beta, Scalar* y, std::size_t ldy, int k, cudaStream_t stream) const;
  // run() in pieces, for entries that reach the device a part at a time (one vector, alpha != 0):
  // sum_chunks enqueues the sums of chunks [first, last) from col and val; finish_rows then
  // writes the listed rows [first, last), whose chunks have all been summed before on `stream`.
  void sum_chunks(const Ordinal* col, const Scalar* val, Ordinal first, Ordinal last,
                  const Scalar* x, cudaStream_t stream) const;
  void finish_rows(Ordinal first, Ordinal last, Scalar alpha, Scalar beta, Scalar* y,
                   cudaStream_t stream) const;
  std::size_t device_bytes() const;
  // The device bytes a path of `plan` for `max_vectors` vectors holds.
  static std::size_t device_bytes(const LongRowPlan& plan, int max_vectors = 1);
  // Whether every listed row has a chunk (no listed row is empty), so that one launch of
  // long_row_chunk over chunks() writes every listed row; false when no row is listed.
  bool one_launch() const { return nrows_ > 0 && one_launch_; }
  // The device arrays for long_row_chunk (long_rows.cuh).
  LongRowChunks<Scalar> chunks() const {
    return {chunk_begin_.data(), chunk_end_.data(), chunk_row_.data(), rows_.data(),
            first_chunk_.data(), partial_.data(),   arrivals_.data(),  nchunks_};
  }

 private:
  Ordinal nrows_ = 0;
  Ordinal nchunks_ = 0;
  int max_vectors_ = 1;
  bool one_launch_ = false;
  DeviceBuffer<Ordinal> rows_;
  DeviceBuffer<Ordinal> first_chunk_;
  DeviceBuffer<Offset> chunk_begin_, chunk_end_;
  DeviceBuffer<Ordinal> chunk_row_;
  DeviceBuffer<Scalar> partial_;
  DeviceBuffer<unsigned> arrivals_;
};

}  // namespace kspmv::cuda

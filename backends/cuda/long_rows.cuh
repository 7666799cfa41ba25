// The long-row path's device side in one launch: a warp sums one chunk of a long row, and the
// warp that sums the row's last chunk to finish (counted on an arrival counter, after a
// __threadfence) adds the row's chunk sums in chunk order and writes y. The two-kernel path
// (long_rows.cu) sums with the same chunk_sum and row_total: the result is the same bit for bit.
// Any kernel can run chunks in some of its warps (csr_vector.cu runs them in its first blocks).
#pragma once

#include "backends/cuda/complex.hpp"
#include "backends/cuda/long_rows.hpp"
#include "backends/cuda/warp_reduce.cuh"

namespace kspmv::cuda {

// Every lane of one warp calls it: sum[c] = the sum of val * X(col, c) over the entries
// [begin, end), for the K vectors X(j, c) = x[j + c*ldx], in lane 0 (each entry read once for
// all K). Offsets are 64-bit: any matrix, and e + 32 cannot overflow.
template <int K, class Scalar>
__device__ __forceinline__ void chunk_sum(const Ordinal* __restrict__ col,
                                          const Scalar* __restrict__ val, long long begin,
                                          long long end, const Scalar* __restrict__ x,
                                          std::size_t ldx, Scalar (&sum)[K]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int c = 0; c < K; ++c) sum[c] = 0;
    // Unrolled for one vector (as CSR-Vector's main loop), so that several steps' loads are in
    // flight; K vectors keep K loads a step in flight already.
#pragma unroll(K == 1 ? 4 : 1)
  for (long long e = begin + lane; e < end; e += 32) {
    const Scalar v = ldg(val + e);
    const Scalar* xj = x + __ldg(col + e);
#pragma unroll
    for (int c = 0; c < K; ++c) sum[c] += v * ldg(xj + c * ldx);
  }
#pragma unroll
  for (int c = 0; c < K; ++c) sum[c] = warp_sum<32>(sum[c]);
}

// Every lane of one warp calls it: the chunk sums partial[first, last) added in chunk order, in
// lane 0. Read through L2 only: they may have been written by other blocks of this launch.
template <class Scalar>
__device__ __forceinline__ Scalar row_total(const Scalar* partial, Ordinal first, Ordinal last) {
  Scalar total = 0;
  for (Ordinal ch = first + static_cast<Ordinal>(threadIdx.x % 32); ch < last; ch += 32)
    total += ldcg(partial + ch);
  return warp_sum<32>(total);
}

// Every lane of one warp calls it with the same chunk < c.nchunks (alpha != 0). The row is
// written y[r] = alpha * sum + beta * y[r] once, by the last of its chunks' warps.
template <class Scalar>
__device__ void long_row_chunk(const LongRowChunks<Scalar>& c, long long chunk,
                               const Ordinal* __restrict__ col, const Scalar* __restrict__ val,
                               const Scalar* __restrict__ x, Scalar alpha, Scalar beta,
                               Scalar* __restrict__ y) {
  Scalar sum[1];
  chunk_sum<1>(col, val, c.chunk_begin[chunk], c.chunk_end[chunk], x, 0, sum);
  const Ordinal i = c.chunk_row[chunk];
  const Ordinal first = c.first_chunk[i], last = c.first_chunk[i + 1];
  int finishes = 0;
  if (threadIdx.x % 32 == 0) {
    c.partial[chunk] = sum[0];
    __threadfence();  // the sum is visible device-wide before the count says so
    finishes = atomicAdd(c.arrivals + i, 1u) == static_cast<unsigned>(last - first - 1);
  }
  if (!__shfl_sync(0xffffffffu, finishes, 0)) return;
  __threadfence();
  const Scalar total = row_total(c.partial, first, last);
  if (threadIdx.x % 32 == 0) {
    c.arrivals[i] = 0;
    Scalar* yr = y + c.rows[i];
    *yr = beta == Scalar(0) ? alpha * total : alpha * total + beta * *yr;
  }
}

}  // namespace kspmv::cuda

// The long-row path's device side in one launch: a warp sums one chunk of a long row, and the
// warp that sums the row's last chunk to finish (counted on an arrival counter, after a
// __threadfence) adds the row's chunk sums in chunk order and writes y. The sums are the
// two-kernel path's, in the same order: the result is the same bit for bit. Any kernel can run
// chunks in some of its warps (csr_vector.cu runs them in its first blocks).
#pragma once

#include "backends/cuda/complex.hpp"
#include "backends/cuda/long_rows.hpp"
#include "backends/cuda/warp_reduce.cuh"

namespace kspmv::cuda {

// Every lane of one warp calls it with the same chunk < c.nchunks (alpha != 0). The row is
// written y[r] = alpha * sum + beta * y[r] once, by the last of its chunks' warps.
template <class Scalar>
__device__ void long_row_chunk(const LongRowChunks<Scalar>& c, long long chunk,
                               const Ordinal* __restrict__ col, const Scalar* __restrict__ val,
                               const Scalar* __restrict__ x, Scalar alpha, Scalar beta,
                               Scalar* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  const long long end = c.chunk_end[chunk];
  Scalar sum = 0;
#pragma unroll 4
  for (long long e = c.chunk_begin[chunk] + lane; e < end; e += 32)
    sum += ldg(val + e) * ldg(x + __ldg(col + e));
  sum = warp_sum<32>(sum);
  const Ordinal i = c.chunk_row[chunk];
  const Ordinal first = c.first_chunk[i], last = c.first_chunk[i + 1];
  int finishes = 0;
  if (lane == 0) {
    c.partial[chunk] = sum;
    __threadfence();  // the sum is visible device-wide before the count says so
    finishes = atomicAdd(c.arrivals + i, 1u) == static_cast<unsigned>(last - first - 1);
  }
  if (!__shfl_sync(0xffffffffu, finishes, 0)) return;
  __threadfence();
  Scalar total = 0;
  for (Ordinal ch = first + lane; ch < last; ch += 32) total += ldcg(c.partial + ch);
  total = warp_sum<32>(total);
  if (lane == 0) {
    c.arrivals[i] = 0;
    Scalar* yr = y + c.rows[i];
    *yr = beta == Scalar(0) ? alpha * total : alpha * total + beta * *yr;
  }
}

}  // namespace kspmv::cuda

// The breadth-first ordering and P A P^T of bfs_order.hpp.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/bfs_order.hpp"
#include "backends/cuda/check.hpp"
#include "backends/cuda/cub_temp.cuh"
#include "backends/cuda/grid_stride.cuh"
#include "backends/cuda/windowed_gather.hpp"
#include "kspmv/analysis/ordering.hpp"

namespace kspmv::cuda {

namespace {

__global__ void unvisited_kernel(Ordinal* level, Ordinal* seed, Ordinal n) {
  KSPMV_GRID_STRIDE(v, n) {
    level[v] = -1;
    seed[v] = n;
  }
}

// The round's seeds: every spacing-th vertex not yet reached, at level `depth`.
__global__ void seed_kernel(Ordinal* level, Ordinal* seed, Ordinal n, Ordinal spacing,
                            Ordinal depth, Ordinal* front, Ordinal* count) {
  KSPMV_GRID_STRIDE(k, (static_cast<long long>(n) + spacing - 1) / spacing) {
    const Ordinal v = static_cast<Ordinal>(k * spacing);
    if (level[v] < 0) {
      level[v] = depth;
      seed[v] = v;
      front[atomicAdd(count, 1)] = v;
    }
  }
}

// One level: the unreached neighbours of the frontier (level `depth`) join the next one; each
// vertex of the next level takes the least seed among its frontier neighbours.
__global__ void expand_kernel(const DeviceOffset* __restrict__ row_ptr,
                              const Ordinal* __restrict__ col, const Ordinal* __restrict__ front,
                              Ordinal size, Ordinal depth, Ordinal* level, Ordinal* seed,
                              Ordinal* next, Ordinal* count) {
  KSPMV_GRID_STRIDE(k, size) {
    const Ordinal v = front[k], s = seed[v];
    for (DeviceOffset p = row_ptr[v]; p < row_ptr[v + 1]; ++p) {
      const Ordinal w = col[p];
      const Ordinal was = atomicCAS(&level[w], -1, depth + 1);
      if (was == -1) next[atomicAdd(count, 1)] = w;
      if (was == -1 || was == depth + 1) atomicMin(&seed[w], s);
    }
  }
}

__global__ void key_kernel(const Ordinal* level, const Ordinal* seed, Ordinal n, std::uint64_t* key,
                           Ordinal* index) {
  KSPMV_GRID_STRIDE(v, n) {
    key[v] = static_cast<std::uint64_t>(seed[v]) << 32 | static_cast<std::uint32_t>(level[v]);
    index[v] = static_cast<Ordinal>(v);
  }
}

// The lengths of the rows of P A P^T, one place on: the inclusive scan makes the row pointer.
__global__ void length_kernel(const DeviceOffset* row_ptr, const Ordinal* perm, Ordinal n,
                              DeviceOffset* out) {
  KSPMV_GRID_STRIDE(i, n) {
    const Ordinal r = perm[i];
    out[i + 1] = row_ptr[r + 1] - row_ptr[r];
    if (i == 0) out[0] = 0;
  }
}

// Row i of P A P^T: row perm[i] of A, its columns renumbered, its entries in A's order.
template <class Scalar>
__global__ void move_rows_kernel(const DeviceOffset* __restrict__ row_ptr,
                                 const Ordinal* __restrict__ col, const Scalar* __restrict__ val,
                                 const Ordinal* __restrict__ perm, const Ordinal* __restrict__ inv,
                                 Ordinal n, const DeviceOffset* __restrict__ out_ptr,
                                 Ordinal* out_col, Scalar* out_val) {
  KSPMV_GRID_STRIDE(i, n) {
    const Ordinal r = perm[i];
    DeviceOffset q = out_ptr[i];
    for (DeviceOffset p = row_ptr[r]; p < row_ptr[r + 1]; ++p, ++q) {
      out_col[q] = inv[col[p]];
      out_val[q] = val[p];
    }
  }
}

}  // namespace

BfsPermutation bfs_order(const DeviceOffset* row_ptr, const Ordinal* col, Ordinal n,
                         cudaStream_t stream) {
  BfsPermutation out{DeviceBuffer<Ordinal>(n, kPooled, stream),
                     DeviceBuffer<Ordinal>(n, kPooled, stream)};
  if (n == 0) return out;
  DeviceBuffer<Ordinal> level(n, kPooled, stream), seed(n, kPooled, stream);
  DeviceBuffer<Ordinal> front(n, kPooled, stream), next(n, kPooled, stream);
  DeviceBuffer<Ordinal> count(1, kPooled, stream);
  unvisited_kernel<<<grid_for(n), kStrideBlock, 0, stream>>>(level.data(), seed.data(), n);
  KSPMV_CUDA_CHECK(cudaGetLastError());
  const auto counted = [&] {
    Ordinal c = 0;
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(&c, count.data(), sizeof c, cudaMemcpyDeviceToHost, stream));
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    KSPMV_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(Ordinal), stream));
    return c;
  };
  KSPMV_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(Ordinal), stream));
  Ordinal depth = 0;  // analysis::bfs_order's rounds and levels, step for step
  for (Ordinal spacing = analysis::kBfsSeedSpacing;;
       spacing = std::max<Ordinal>(1, spacing / analysis::kBfsSeedShrink)) {
    seed_kernel<<<grid_for((static_cast<long long>(n) + spacing - 1) / spacing), kStrideBlock, 0,
                  stream>>>(level.data(), seed.data(), n, spacing, depth, front.data(),
                            count.data());
    KSPMV_CUDA_CHECK(cudaGetLastError());
    for (Ordinal size = counted(); size > 0; ++depth) {
      expand_kernel<<<grid_for(size), kStrideBlock, 0, stream>>>(row_ptr, col, front.data(), size,
                                                                 depth, level.data(), seed.data(),
                                                                 next.data(), count.data());
      KSPMV_CUDA_CHECK(cudaGetLastError());
      size = counted();
      std::swap(front, next);
    }
    if (spacing == 1) break;
  }
  // By (seed, level), ties by index: a stable radix sort of the pairs (key, index).
  DeviceBuffer<std::uint64_t> keys(n, kPooled, stream), sorted(n, kPooled, stream);
  key_kernel<<<grid_for(n), kStrideBlock, 0, stream>>>(level.data(), seed.data(), n, keys.data(),
                                                       front.data());
  KSPMV_CUDA_CHECK(cudaGetLastError());
  const int end_bit = 32 + bit_width(static_cast<long long>(n) + 1);
  with_temp(stream, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, keys.data(), sorted.data(), front.data(),
                                           out.perm.data(), n, 0, end_bit, stream);
  });
  invert_permutation(out.perm.data(), n, out.inv.data(), stream);
  for (auto* b : {&level, &seed, &front, &next, &count}) b->free_after(stream);
  keys.free_after(stream);
  sorted.free_after(stream);
  return out;
}

template <class Scalar>
DeviceCsr<Scalar> permute_symmetric(const DeviceCsr<Scalar>& a, const BfsPermutation& p,
                                    cudaStream_t stream) {
  const Ordinal n = a.m;
  DeviceCsr<Scalar> b;
  b.m = b.n = n;
  b.nnz = a.nnz;
  b.row_ptr = DeviceBuffer<DeviceOffset>(static_cast<std::size_t>(n) + 1);
  b.col = DeviceBuffer<Ordinal>(a.nnz);
  b.val = DeviceBuffer<Scalar>(a.nnz);
  length_kernel<<<grid_for(n), kStrideBlock, 0, stream>>>(a.row_ptr.data(), p.perm.data(), n,
                                                          b.row_ptr.data());
  KSPMV_CUDA_CHECK(cudaGetLastError());
  if (n == 0) {
    KSPMV_CUDA_CHECK(cudaMemsetAsync(b.row_ptr.data(), 0, sizeof(DeviceOffset), stream));
    return b;
  }
  with_temp(stream, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::InclusiveSum(temp, bytes, b.row_ptr.data() + 1, b.row_ptr.data() + 1, n,
                                         stream);
  });
  move_rows_kernel<<<grid_for(n), kStrideBlock, 0, stream>>>(
      a.row_ptr.data(), a.col.data(), a.val.data(), p.perm.data(), p.inv.data(), n,
      b.row_ptr.data(), b.col.data(), b.val.data());
  KSPMV_CUDA_CHECK(cudaGetLastError());
  return b;
}

template DeviceCsr<float> permute_symmetric(const DeviceCsr<float>&, const BfsPermutation&,
                                            cudaStream_t);
template DeviceCsr<double> permute_symmetric(const DeviceCsr<double>&, const BfsPermutation&,
                                             cudaStream_t);

}  // namespace kspmv::cuda

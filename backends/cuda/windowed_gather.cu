// The two-pass gather of windowed_gather.hpp.
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

#include "backends/cuda/check.hpp"
#include "backends/cuda/cub_temp.cuh"
#include "backends/cuda/grid_stride.cuh"
#include "backends/cuda/windowed_gather.hpp"
#include "kspmv/core/error.hpp"

namespace kspmv::cuda {

namespace {

__global__ void inverse_kernel(const Ordinal* perm, Ordinal n, Ordinal* inv) {
  KSPMV_GRID_STRIDE(i, n) {
    inv[perm[i]] = static_cast<Ordinal>(i);
  }
}

__global__ void window_kernel(const Ordinal* src, Ordinal n, Ordinal window, std::uint32_t* key,
                              Ordinal* index) {
  KSPMV_GRID_STRIDE(i, n) {
    key[i] = static_cast<std::uint32_t>(src[i] / window);
    index[i] = static_cast<Ordinal>(i);
  }
}

// t-th of the order by (window, i): pass 1 reads src of that i into t, pass 2 takes t into i.
__global__ void plan_kernel(const Ordinal* src, const Ordinal* order, Ordinal n, Ordinal* from,
                            Ordinal* slot) {
  KSPMV_GRID_STRIDE(t, n) {
    const Ordinal i = order[t];
    from[t] = src[i];
    slot[i] = static_cast<Ordinal>(t);
  }
}

// out[i] = in[idx[i]] for i < n, kPerThread entries a thread (a warp's 32 * kPerThread in a row,
// each lane's 32 apart): that many scattered loads in flight a thread. On an H200, 6e7 doubles
// in windows of an eighth of the L2: 0.852 ms (permute_bench); at one entry a thread 1.067.
constexpr int kPerThread = 4;

template <class Scalar>
__global__ void pass_kernel(Scalar* __restrict__ out, const Scalar* __restrict__ in,
                            const Ordinal* __restrict__ idx, Ordinal n) {
  constexpr long long span = 32 * kPerThread;
  const long long warps = static_cast<long long>(gridDim.x) * blockDim.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (long long base = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32 * span;
       base < n; base += warps * span) {
    Scalar v[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const long long i = base + lane + 32 * j;
      if (i < n) v[j] = in[idx[i]];
    }
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const long long i = base + lane + 32 * j;
      if (i < n) out[i] = v[j];
    }
  }
}

template <class Scalar>
void pass(Scalar* out, const Scalar* in, const Ordinal* idx, Ordinal n, cudaStream_t stream) {
  pass_kernel<<<grid_for((static_cast<long long>(n) + kPerThread - 1) / kPerThread), kStrideBlock,
                0, stream>>>(out, in, idx, n);
  KSPMV_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void invert_permutation(const Ordinal* perm, Ordinal n, Ordinal* inv, cudaStream_t stream) {
  if (n <= 0) return;
  inverse_kernel<<<grid_for(n), kStrideBlock, 0, stream>>>(perm, n, inv);
  KSPMV_CUDA_CHECK(cudaGetLastError());
}

WindowedGather::WindowedGather(const Ordinal* src, Ordinal n, Ordinal window, bool inverse,
                               cudaStream_t stream)
    : n_(n), from_(n), slot_(n) {
  if (n <= 0) return;
  if (window <= 0) throw InvalidArgument("WindowedGather: the window must hold an entry");
  DeviceBuffer<Ordinal> inv;
  if (inverse) {
    inv = DeviceBuffer<Ordinal>(n, kPooled, stream);
    invert_permutation(src, n, inv.data(), stream);
    src = inv.data();
  }
  DeviceBuffer<std::uint32_t> key(n, kPooled, stream), sorted_key(n, kPooled, stream);
  DeviceBuffer<Ordinal> index(n, kPooled, stream), order(n, kPooled, stream);
  window_kernel<<<grid_for(n), kStrideBlock, 0, stream>>>(src, n, window, key.data(), index.data());
  KSPMV_CUDA_CHECK(cudaGetLastError());
  const int end_bit = bit_width((static_cast<long long>(n) + window - 1) / window);
  with_temp(stream, [&](void* temp, std::size_t& bytes) {  // stable: i in order in a window
    return cub::DeviceRadixSort::SortPairs(temp, bytes, key.data(), sorted_key.data(), index.data(),
                                           order.data(), n, 0, end_bit, stream);
  });
  plan_kernel<<<grid_for(n), kStrideBlock, 0, stream>>>(src, order.data(), n, from_.data(),
                                                        slot_.data());
  KSPMV_CUDA_CHECK(cudaGetLastError());
  for (auto* b : {&index, &order, &inv}) b->free_after(stream);
  key.free_after(stream);
  sorted_key.free_after(stream);
}

template <class Scalar>
void WindowedGather::run(const Scalar* in, Scalar* out, Scalar* work, cudaStream_t stream) const {
  if (n_ <= 0) return;
  pass(work, in, from_.data(), n_, stream);
  pass(out, work, slot_.data(), n_, stream);
}

template void WindowedGather::run(const float*, float*, float*, cudaStream_t) const;
template void WindowedGather::run(const double*, double*, double*, cudaStream_t) const;

}  // namespace kspmv::cuda

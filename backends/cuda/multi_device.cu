// The two small kernels of the multi-device executor: halo send buffers and Merge sums.
#include <algorithm>

#include "backends/cuda/check.hpp"
#include "backends/cuda/multi_device.hpp"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;

int grid_for(Ordinal count) {
  return static_cast<int>(std::min<long long>((count + kBlock - 1) / kBlock, 65535));
}

template <class S>
__global__ void gather_kernel(S* __restrict__ dst, const S* __restrict__ src,
                              const Ordinal* __restrict__ idx, Ordinal count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += stride)
    dst[i] = src[idx[i]];
}

template <class S>
__global__ void add_kernel(S* __restrict__ y, const S* __restrict__ p, Ordinal count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += stride)
    y[i] += p[i];
}

}  // namespace

template <class S>
void gather_entries(S* dst, const S* src, const Ordinal* idx, Ordinal count, cudaStream_t stream) {
  if (count <= 0) return;
  gather_kernel<<<grid_for(count), kBlock, 0, stream>>>(dst, src, idx, count);
  check_launch("gather_kernel");
}

template <class S>
void add_vector(S* y, const S* p, Ordinal count, cudaStream_t stream) {
  if (count <= 0) return;
  add_kernel<<<grid_for(count), kBlock, 0, stream>>>(y, p, count);
  check_launch("add_kernel");
}

template void gather_entries(float*, const float*, const Ordinal*, Ordinal, cudaStream_t);
template void gather_entries(double*, const double*, const Ordinal*, Ordinal, cudaStream_t);
template void add_vector(float*, const float*, Ordinal, cudaStream_t);
template void add_vector(double*, const double*, Ordinal, cudaStream_t);

}  // namespace kspmv::cuda

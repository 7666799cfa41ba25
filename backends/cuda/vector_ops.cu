#include <algorithm>

#include "backends/cuda/check.hpp"
#include "backends/cuda/complex.hpp"
#include "backends/cuda/grid_stride.cuh"
#include "backends/cuda/vector_ops.hpp"

namespace kspmv::cuda {

namespace {

// Grid-stride over the rows (x) and the columns (y) of Y.
template <class Scalar>
__global__ void scale_kernel(Scalar* __restrict__ y, Ordinal m, std::size_t ldy, int k,
                             Scalar beta) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (int c = blockIdx.y; c < k; c += gridDim.y) {
    Scalar* yc = y + c * ldy;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < m;
         i += stride) {
      yc[i] = beta == Scalar(0) ? Scalar(0) : beta * yc[i];
    }
  }
}

// dst[i or idx[i]] = src[i or idx[i]]: gather (IndexSrc), scatter (IndexDst), or entries at the
// same positions of another vector (both).
template <bool IndexDst, bool IndexSrc, class Scalar>
__global__ void indexed_copy_kernel(Scalar* __restrict__ dst, const Scalar* __restrict__ src,
                                    const Ordinal* __restrict__ idx, Ordinal count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    const long long at = IndexDst || IndexSrc ? idx[i] : i;
    dst[IndexDst ? at : i] = src[IndexSrc ? at : i];
  }
}

template <class Scalar>
__global__ void add_kernel(Scalar* __restrict__ y, const Scalar* __restrict__ p, Ordinal count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += stride)
    y[i] += p[i];
}

template <bool IndexDst, bool IndexSrc, class Scalar>
void indexed_copy(Scalar* dst, const Scalar* src, const Ordinal* idx, Ordinal count,
                  cudaStream_t stream) {
  if (count <= 0) return;
  indexed_copy_kernel<IndexDst, IndexSrc>
      <<<grid_for(count), kStrideBlock, 0, stream>>>(dst, src, idx, count);
  check_launch("indexed_copy_kernel");
}

}  // namespace

template <class Scalar>
void scale_columns(Scalar* y, Ordinal m, std::size_t ldy, int k, Scalar beta, cudaStream_t stream) {
  if (m <= 0 || k <= 0 || beta == Scalar(1)) return;
  const dim3 blocks(grid_for(m), static_cast<unsigned>(std::min(k, 65535)));
  scale_kernel<<<blocks, kStrideBlock, 0, stream>>>(y, m, ldy, k, beta);
  check_launch("scale_kernel");
}

template <class Scalar>
void scale_vector(Scalar* y, Ordinal m, Scalar beta, cudaStream_t stream) {
  scale_columns(y, m, static_cast<std::size_t>(m), 1, beta, stream);
}

template <class Scalar>
void gather_entries(Scalar* dst, const Scalar* src, const Ordinal* idx, Ordinal count,
                    cudaStream_t stream) {
  indexed_copy<false, true>(dst, src, idx, count, stream);
}

template <class Scalar>
void scatter_entries(Scalar* dst, const Scalar* src, const Ordinal* idx, Ordinal count,
                     cudaStream_t stream) {
  indexed_copy<true, false>(dst, src, idx, count, stream);
}

template <class Scalar>
void pull_entries(Scalar* dst, const Scalar* src, const Ordinal* idx, Ordinal count,
                  cudaStream_t stream) {
  indexed_copy<true, true>(dst, src, idx, count, stream);
}

template <class Scalar>
void add_vector(Scalar* y, const Scalar* p, Ordinal count, cudaStream_t stream) {
  if (count <= 0) return;
  add_kernel<<<grid_for(count), kStrideBlock, 0, stream>>>(y, p, count);
  check_launch("add_kernel");
}

template void scale_vector(float*, Ordinal, float, cudaStream_t);
template void scale_vector(double*, Ordinal, double, cudaStream_t);
template void scale_columns(float*, Ordinal, std::size_t, int, float, cudaStream_t);
template void scale_columns(double*, Ordinal, std::size_t, int, double, cudaStream_t);
template void scale_vector(Complex<float>*, Ordinal, Complex<float>, cudaStream_t);
template void scale_vector(Complex<double>*, Ordinal, Complex<double>, cudaStream_t);
template void scale_columns(Complex<float>*, Ordinal, std::size_t, int, Complex<float>,
                            cudaStream_t);
template void scale_columns(Complex<double>*, Ordinal, std::size_t, int, Complex<double>,
                            cudaStream_t);
template void gather_entries(float*, const float*, const Ordinal*, Ordinal, cudaStream_t);
template void gather_entries(double*, const double*, const Ordinal*, Ordinal, cudaStream_t);
template void scatter_entries(float*, const float*, const Ordinal*, Ordinal, cudaStream_t);
template void scatter_entries(double*, const double*, const Ordinal*, Ordinal, cudaStream_t);
template void pull_entries(float*, const float*, const Ordinal*, Ordinal, cudaStream_t);
template void pull_entries(double*, const double*, const Ordinal*, Ordinal, cudaStream_t);
template void add_vector(float*, const float*, Ordinal, cudaStream_t);
template void add_vector(double*, const double*, Ordinal, cudaStream_t);

}  // namespace kspmv::cuda

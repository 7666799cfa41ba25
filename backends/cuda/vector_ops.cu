#include <algorithm>

#include "backends/cuda/check.hpp"
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

}  // namespace

template <class Scalar>
void scale_columns(Scalar* y, Ordinal m, std::size_t ldy, int k, Scalar beta, cudaStream_t stream) {
  if (m <= 0 || k <= 0 || beta == Scalar(1)) return;
  constexpr int kBlock = 256;
  const dim3 blocks(static_cast<unsigned>(std::min<long long>((m + kBlock - 1) / kBlock, 65535)),
                    static_cast<unsigned>(std::min(k, 65535)));
  scale_kernel<<<blocks, kBlock, 0, stream>>>(y, m, ldy, k, beta);
  check_launch("scale_kernel");
}

template <class Scalar>
void scale_vector(Scalar* y, Ordinal m, Scalar beta, cudaStream_t stream) {
  scale_columns(y, m, static_cast<std::size_t>(m), 1, beta, stream);
}

template void scale_vector(float*, Ordinal, float, cudaStream_t);
template void scale_vector(double*, Ordinal, double, cudaStream_t);
template void scale_columns(float*, Ordinal, std::size_t, int, float, cudaStream_t);
template void scale_columns(double*, Ordinal, std::size_t, int, double, cudaStream_t);

}  // namespace kspmv::cuda

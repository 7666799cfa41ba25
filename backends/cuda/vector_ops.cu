#include <algorithm>

#include "backends/cuda/check.hpp"
#include "backends/cuda/vector_ops.hpp"

namespace kspmv::cuda {

namespace {

template <class Scalar>
__global__ void scale_kernel(Scalar* __restrict__ y, Ordinal m, Scalar beta) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < m;
       i += stride) {
    y[i] = beta == Scalar(0) ? Scalar(0) : beta * y[i];
  }
}

}  // namespace

template <class Scalar>
void scale_vector(Scalar* y, Ordinal m, Scalar beta, cudaStream_t stream) {
  if (m <= 0 || beta == Scalar(1)) return;
  constexpr int kBlock = 256;
  const int blocks = static_cast<int>(std::min<long long>((m + kBlock - 1) / kBlock, 65535));
  scale_kernel<<<blocks, kBlock, 0, stream>>>(y, m, beta);
  check_launch("scale_kernel");
}

template void scale_vector(float*, Ordinal, float, cudaStream_t);
template void scale_vector(double*, Ordinal, double, cudaStream_t);

}  // namespace kspmv::cuda

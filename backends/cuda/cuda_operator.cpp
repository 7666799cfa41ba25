// Placeholder until the CUDA backend work lands: reports devices, builds no kernels yet.
#include "backends/cuda/cuda_operator.hpp"

#include <cuda_runtime_api.h>

namespace kspmv::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrPointers<Scalar>&, const Options&) {
  throw UnsupportedError("CUDA operator not built yet");
}
template std::unique_ptr<OperatorImpl<float>> make_operator(const CsrPointers<float>&,
                                                            const Options&);
template std::unique_ptr<OperatorImpl<double>> make_operator(const CsrPointers<double>&,
                                                             const Options&);

}  // namespace kspmv::cuda

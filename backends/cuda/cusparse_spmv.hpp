// The cuSPARSE baseline: cusparseSpMV on the uploaded CSR with CUSPARSE_SPMV_CSR_ALG1
// (Kernel::Cusparse) or CSR_ALG2 (Kernel::CusparseAlg2, deterministic); real values, and complex
// ones (Complex, CUDA_C_32F / CUDA_C_64F).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

// Everything is set up once here: handle (an idle one of the device's, memory.hpp), matrix and
// vector descriptors, the external buffer (sized with alpha = beta = 1) and
// cusparseSpMV_preprocess. Each run sets the stream, points the vector descriptors at x and y
// (cusparseDnVecSetValues) and calls cusparseSpMV with the same buffer. y must be 16-byte aligned
// (cudaMalloc'd memory is). kernel: Cusparse or CusparseAlg2 (InvalidArgument otherwise).
// `scratch` (DevicePlanInput::scratch) holds the stand-in vectors of the set-up, which then
// leaves its work queued on `stream` (the preprocessing's); without it they are allocated here,
// and the set-up waits for the device (null `stream`) or frees them stream-ordered on `stream`
// and leaves its work queued there (the kernel is ready once `stream` has passed it).
template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_cusparse(
    std::shared_ptr<const DeviceCsr<Scalar>> a, Kernel kernel = Kernel::Cusparse,
    const std::function<void*(std::size_t)>& scratch = nullptr, cudaStream_t stream = nullptr);

// Mixed precision: the float matrix `a` on double vectors, cusparseSpMV with A in CUDA_R_32F and
// x, y and the compute type CUDA_R_64F (cuSPARSE's mixed-precision table for SpMV), set up on the
// legacy default stream (ready on return). The values are read from `a`, which the caller
// refreshes (update_values does nothing). UnsupportedError where cuSPARSE lacks the pair.
std::unique_ptr<DeviceSpmv<double>> make_cusparse_mixed(std::shared_ptr<const DeviceCsr<float>> a,
                                                        Kernel kernel = Kernel::Cusparse);

}  // namespace kspmv::cuda

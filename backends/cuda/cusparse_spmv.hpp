// The cuSPARSE baseline: cusparseSpMV on the uploaded CSR with CUSPARSE_SPMV_CSR_ALG1
// (Kernel::Cusparse) or CSR_ALG2 (Kernel::CusparseAlg2, deterministic).
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

}  // namespace kspmv::cuda

// The transpose of a CSR matrix already on the device, built there: the CSR of A^T is the CSC of
// A, from cusparseCsr2cscEx2 (CUSPARSE_CSR2CSC_ALG1, a stable sort by column, so every row of
// A^T lists its columns, the rows of A, in ascending order; an entry A holds twice stays twice).
#pragma once

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

// A^T of `a` (on the current device, complete: no work pending on it). Synchronous: returns once
// the result is complete; runs on a stream of its own. Device memory: the result, 4 (n + 1) +
// nnz (4 + sizeof(S)) bytes, and for the time of the call the work buffer cuSPARSE asks for
// (cusparseCsr2cscEx2_bufferSize, proportional to nnz). A matrix without non-zeros gets a zero
// row pointer and no cuSPARSE call. DeviceOutOfMemory when the device cannot hold them;
// UnsupportedError for a matrix with 64-bit offsets (DeviceCsr::wide), which cuSPARSE's
// conversion does not take.
template <class S>
DeviceCsr<S> transpose(const DeviceCsr<S>& a);

}  // namespace kspmv::cuda

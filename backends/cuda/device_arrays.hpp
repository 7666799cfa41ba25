// A CSR matrix that arrives in device memory (the caller's Views, DeviceCsrArrays) made the
// DeviceCsr the kernels run on, and checked, on the device.
#pragma once

#include <vector>

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

// The DeviceCsr of `a` (device memory of the current device): a 32-bit row pointer and 32-bit
// column indices are used in place (borrowed: the caller keeps them alive), 64-bit ones narrowed
// once into device copies (UnsupportedError when nnz >= 2^31). The values are always copied, so
// that update_values never writes into the caller's array. With `validate`, the arrays are
// checked on the device as CsrMatrix::validate checks a host matrix (InvalidArgument naming the
// first bad row or entry).
template <class Scalar>
DeviceCsr<Scalar> adopt(const DeviceCsrArrays<Scalar>& a, bool validate);

// The row pointer of `a`, read back and widened (what the kernels' host-side plans read).
template <class Scalar>
std::vector<Offset> download_row_ptr(const DeviceCsr<Scalar>& a);

}  // namespace kspmv::cuda

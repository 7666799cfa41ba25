// A CSR matrix that arrives in device memory (the caller's Views, DeviceCsrArrays) made the
// DeviceCsr the kernels run on, and checked, on the device.
#pragma once

#include <vector>

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

// The DeviceCsr of `a` (device memory of the current device). Offsets are 32-bit when nnz < 2^31
// and 64-bit otherwise (DeviceCsr::wide): a signed row pointer of that width is used in place
// (borrowed: the caller keeps it alive), any other converted once into a device copy. 32-bit
// column indices are used in place, 64-bit ones narrowed into a copy. The values are always
// copied, so that update_values never writes into the caller's array. With `validate`, the
// arrays are checked on the device as CsrMatrix::validate checks a host matrix
// (InvalidArgument naming the first bad row or entry). The work goes on `stream`, after the
// caller's work there: null, the legacy default stream, ready on return; another, left queued.
// The host waits for `stream` only to read a check's result back (a converted array's range,
// `validate`).
template <class Scalar>
DeviceCsr<Scalar> adopt(const DeviceCsrArrays<Scalar>& a, bool validate,
                        cudaStream_t stream = nullptr);

// The row pointer of `a`, read back as Offsets (what the kernels' host-side plans read).
template <class Scalar>
std::vector<Offset> download_row_ptr(const DeviceCsr<Scalar>& a);

// A device copy of `count` 32-bit indices (device memory of the current device) as 64-bit ones.
DeviceBuffer<Offset> widen(const Ordinal* indices, std::size_t count);

}  // namespace kspmv::cuda

// One SpMV kernel bound to one matrix on one device: what the CUDA operator, the multi-device
// executor and the benchmarks drive. Each kernel family implements it in its own file.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/operator_impl.hpp"

namespace kspmv::cuda {

// A CSR matrix uploaded to the current device with offsets narrowed to int32.
template <class Scalar>
struct DeviceCsr {
  DeviceBuffer<DeviceOffset> row_ptr;
  DeviceBuffer<Ordinal> col;
  DeviceBuffer<Scalar> val;
  Ordinal m = 0, n = 0;
  DeviceOffset nnz = 0;

  // Uploads `a` (host pointers). Throws UnsupportedError when nnz >= 2^31.
  static DeviceCsr upload(const CsrPointers<Scalar>& a);
  CsrPointers<Scalar, DeviceOffset> view() const {
    return {row_ptr.data(), col.data(), val.data(), m, n};
  }
  std::size_t bytes() const { return row_ptr.bytes() + col.bytes() + val.bytes(); }
};

// A kernel is ready when its factory returns: its set-up transfers and kernels are complete, so
// that its first run may be enqueued on any stream (a non-blocking one included, which does not
// wait for work on the legacy default stream).
template <class Scalar>
class DeviceSpmv {
 public:
  virtual ~DeviceSpmv() = default;
  // Enqueues y = alpha*A*x + beta*y on `stream`; x and y are device pointers. beta == 0
  // overwrites y (NaN included); alpha == 0 must not read A.
  virtual void run(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y, cudaStream_t stream) = 0;
  // Value refresh: new values of the same pattern, nnz entries in the CSR order of the matrix
  // the kernel was built from, put in place of the old ones on `stream`, every plan kept (lanes,
  // batches, long rows, segments, HBP's blocks and row order); the runs enqueued on `stream`
  // after it see them. `values` is device memory of the current device (full-overlap, whose
  // matrix stays in host memory, also takes host memory), read on `stream` only: it may be
  // reused once `stream` has passed the refresh. Kernels that run on a shared DeviceCsr read
  // their values there: the caller copies the new values into DeviceCsr::val first (on
  // `stream`), and these refresh only what they derived from them. Kernels with a layout of
  // their own gather into it. The first call may allocate and upload (synchronously) what the
  // gather needs; later calls neither allocate nor synchronize the host.
  virtual void update_values(const Scalar* values, cudaStream_t stream) = 0;
  virtual Kernel kernel() const = 0;
  // Device memory this kernel holds beyond the shared DeviceCsr (formats, work buffers).
  virtual std::size_t extra_device_bytes() const { return 0; }
};

}  // namespace kspmv::cuda

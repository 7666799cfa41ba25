// One SpMV kernel bound to one matrix on one device: what the CUDA operator, the multi-device
// executor and the benchmarks drive. Each kernel family implements it in its own file.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <type_traits>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/operator_impl.hpp"

namespace kspmv::cuda {

// A CSR matrix on the current device. Its row pointer is 32-bit (row_ptr) when the non-zeros
// fit (narrow_offsets) and 64-bit (row_ptr_wide) otherwise: exactly one of the two is set.
// Kernels on it are templates on the offset type, picked once when they are built (wide()).
template <class Scalar>
struct DeviceCsr {
  DeviceBuffer<DeviceOffset> row_ptr;  // m + 1 entries, or none when wide
  DeviceBuffer<Offset> row_ptr_wide;   // m + 1 entries when wide, else none
  DeviceBuffer<Ordinal> col;
  DeviceBuffer<Scalar> val;
  Ordinal m = 0, n = 0;
  Offset nnz = 0;

  // Uploads `a` (host pointers) with 64-bit offsets when `wide` (by default when nnz >= 2^31;
  // a smaller matrix may take them too, e.g. to test that path).
  static DeviceCsr upload(const CsrPointers<Scalar>& a, bool wide);
  static DeviceCsr upload(const CsrPointers<Scalar>& a) {
    return upload(a, !narrow_offsets(a.nnz()));
  }
  // The same (offsets by default) enqueued on `stream` without waiting: pageable host arrays are
  // staged before it returns, page-locked ones read later (they must stay until `stream` has
  // passed the copies).
  static DeviceCsr upload_on(const CsrPointers<Scalar>& a, cudaStream_t stream);
  bool wide() const { return row_ptr_wide.size() > 0; }
  // The arrays with the row pointer as O (DeviceOffset when !wide(), Offset when wide()).
  template <class O>
  CsrPointers<Scalar, O> view() const {
    if constexpr (std::is_same_v<O, Offset>)
      return {row_ptr_wide.data(), col.data(), val.data(), m, n};
    else
      return {row_ptr.data(), col.data(), val.data(), m, n};
  }
  // f(view<O>()) with the matrix's offset type O.
  template <class F>
  decltype(auto) with_view(F&& f) const {
    return wide() ? f(view<Offset>()) : f(view<DeviceOffset>());
  }
  std::size_t bytes() const {
    return row_ptr.bytes() + row_ptr_wide.bytes() + col.bytes() + val.bytes();
  }
};

// Calls f(O{}) with O = Offset when `wide`, DeviceOffset otherwise: where a kernel family turns
// the offset width of its matrix into the template argument of its kernels, once.
template <class F>
decltype(auto) with_offset_type(bool wide, F&& f) {
  return wide ? f(Offset{}) : f(DeviceOffset{});
}

// A kernel is ready when its factory returns: its set-up transfers and kernels are complete, so
// that its first run may be enqueued on any stream (a non-blocking one included, which does not
// wait for work on the legacy default stream). The one exception: a factory given set-up scratch
// (DevicePlanInput::scratch) may leave work queued, and its caller synchronizes the device.
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

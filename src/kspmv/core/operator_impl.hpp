// The interface a backend implements behind kspmv::Operator. Kokkos-free: the CUDA backend
// implements it in code that never sees Kokkos headers (DESIGN.md "Data model").
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "kspmv/core/csr_pointers.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/types.hpp"

// The CUDA runtime's stream type (cudaStream_t is CUstream_st*), declared so that no CUDA header
// is needed here.
struct CUstream_st;

namespace kspmv {

// A CUDA stream; nullptr is the legacy default stream.
using DeviceStream = CUstream_st*;

// Milliseconds of the last apply on one device of a multi-device operator, from events on that
// device: kernels (from the start of its first kernel to the end of its last), exchange (the
// rest: halo sends before the kernels, y sends after them, merges), total (its whole apply).
struct DeviceTimings {
  double kernel_ms = 0, exchange_ms = 0, total_ms = 0;
};

// Milliseconds of the last apply (and of the one-time preprocessing).
struct Timings {
  double preprocess_ms = 0;  // once, at construction
  double h2d_ms = 0;         // matrix or vector transfers to the device in the last apply
  double kernel_ms = 0;      // SpMV kernels of the last apply
  double exchange_ms = 0;    // multi-device exchange of the last apply
  double total_ms = 0;       // the whole last apply
  // Multi-device operators: per entry of Options::devices (kernel_ms and exchange_ms above are
  // then the slowest device's); empty on one device.
  std::vector<DeviceTimings> devices;
};

template <class Scalar>
class OperatorImpl {
 public:
  virtual ~OperatorImpl() = default;
  // y = alpha*A*x + beta*y with x (ncols) and y (nrows) in host memory; returns when y is written.
  virtual void apply_host(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) = 0;
  // The same with x and y in the memory of the operator's (first) device, enqueued on `stream`
  // after the work already there; returns without waiting for y where the backend can.
  virtual void apply_device(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y,
                            DeviceStream stream) {
    (void)alpha, (void)x, (void)beta, (void)y, (void)stream;
    throw UnsupportedError("this backend has no device vectors; use host vectors");
  }
  // k vectors, column c of x at x + c*ldx and of y at y + c*ldy: one apply per column unless
  // the backend has a kernel for several.
  virtual void apply_host_block(Scalar alpha, const Scalar* x, std::size_t ldx, Scalar beta,
                                Scalar* y, std::size_t ldy, int k) {
    for (int c = 0; c < k; ++c) apply_host(alpha, x + c * ldx, beta, y + c * ldy);
  }
  virtual void apply_device_block(Scalar alpha, const Scalar* x, std::size_t ldx, Scalar beta,
                                  Scalar* y, std::size_t ldy, int k, DeviceStream stream) {
    for (int c = 0; c < k; ++c) apply_device(alpha, x + c * ldx, beta, y + c * ldy, stream);
  }
  // New values for the same pattern, in the CSR order of the matrix the operator was built from
  // (device memory of the first device when `device` is true): every plan is kept.
  virtual void update_values(const Scalar* values, bool device) {
    (void)values, (void)device;
    throw UnsupportedError("update_values: this operator cannot refresh its values");
  }
  // Waits until the device work this operator queued has finished (host backends: nothing).
  virtual void synchronize() {}
  // An operator of the transpose on the same devices with the same options, built from the
  // operator's own current values; nullptr where it keeps no CSR to build it from
  // (kspmv::Operator then transposes its host matrix, whose values it keeps current).
  virtual std::unique_ptr<OperatorImpl> make_transpose() const { return nullptr; }
  // Whether make_transpose builds the transpose (and so kspmv::Operator need not keep the
  // values of a refresh on the host).
  virtual bool transposes_itself() const { return false; }
  // The kernel that runs (Kernel::Auto resolved).
  virtual Kernel kernel() const = 0;
  // The last apply's times; waits for that apply where it is still running.
  virtual Timings timings() const = 0;
};

}  // namespace kspmv

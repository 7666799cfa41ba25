// The interface a backend implements behind kspmv::Operator. Kokkos-free: the CUDA backend
// implements it in code that never sees Kokkos headers (DESIGN.md "Data model").
#pragma once

#include <vector>

#include "kspmv/core/csr_pointers.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

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
  // y = alpha*A*x + beta*y with x (ncols) and y (nrows) in host memory.
  virtual void apply_host(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) = 0;
  // The same with x and y in the memory of the operator's (first) device.
  virtual void apply_device(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
    (void)alpha, (void)x, (void)beta, (void)y;
    throw UnsupportedError("this backend has no device vectors; use host vectors");
  }
  // The kernel that runs (Kernel::Auto resolved).
  virtual Kernel kernel() const = 0;
  virtual Timings timings() const = 0;
};

}  // namespace kspmv

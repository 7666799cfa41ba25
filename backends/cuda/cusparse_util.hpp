// What the cuSPARSE callers share: the cudaDataType of a scalar (real or complex) and an owned
// (or reused) handle.
#pragma once

#include <cusparse.h>

#include <type_traits>
#include <utility>

#include "backends/cuda/check.hpp"
#include "backends/cuda/complex.hpp"
#include "backends/cuda/memory.hpp"

namespace kspmv::cuda {

template <class Scalar>
constexpr cudaDataType cuda_data_type() {
  if constexpr (std::is_same_v<Scalar, float>)
    return CUDA_R_32F;
  else if constexpr (std::is_same_v<Scalar, double>)
    return CUDA_R_64F;
  else if constexpr (std::is_same_v<Scalar, Complex<float>>)
    return CUDA_C_32F;
  else {
    static_assert(std::is_same_v<Scalar, Complex<double>>, "no cudaDataType for this scalar");
    return CUDA_C_64F;
  }
}

// A cuSPARSE handle on the current device, destroyed with the object; made with kReuse, an idle
// one of the device's (memory.hpp) that goes back there, its stream the legacy default stream.
class CusparseHandle {
 public:
  CusparseHandle() { KSPMV_CUDA_CHECK(cusparseCreate(&h_)); }
  explicit CusparseHandle(Reuse) : idle_device_(current_device()) {
    h_ = static_cast<cusparseHandle_t>(take_idle(Idle::Cusparse, idle_device_));
    if (!h_) KSPMV_CUDA_CHECK(cusparseCreate(&h_));
    const cusparseStatus_t code = cusparseSetStream(h_, nullptr);
    if (code != CUSPARSE_STATUS_SUCCESS) {
      give_idle(Idle::Cusparse, idle_device_, std::exchange(h_, nullptr));
      check(code, "cusparseSetStream");
    }
  }
  ~CusparseHandle() {
    if (h_ && idle_device_ >= 0)
      give_idle(Idle::Cusparse, idle_device_, h_);
    else if (h_)
      cusparseDestroy(h_);
  }
  CusparseHandle(CusparseHandle&& o) noexcept
      : h_(std::exchange(o.h_, nullptr)), idle_device_(std::exchange(o.idle_device_, -1)) {}
  CusparseHandle& operator=(CusparseHandle&& o) noexcept {
    std::swap(h_, o.h_);
    std::swap(idle_device_, o.idle_device_);
    return *this;
  }
  CusparseHandle(const CusparseHandle&) = delete;
  CusparseHandle& operator=(const CusparseHandle&) = delete;
  cusparseHandle_t get() const { return h_; }

 private:
  cusparseHandle_t h_ = nullptr;
  int idle_device_ = -1;  // >= 0: goes back to this device's idle list
};

}  // namespace kspmv::cuda

// What the cuSPARSE callers share: the cudaDataType of a scalar and an owned handle.
#pragma once

#include <cusparse.h>

#include <type_traits>
#include <utility>

#include "backends/cuda/check.hpp"

namespace kspmv::cuda {

template <class Scalar>
constexpr cudaDataType cuda_data_type() {
  static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>);
  return std::is_same_v<Scalar, float> ? CUDA_R_32F : CUDA_R_64F;
}

// A cuSPARSE handle on the current device, destroyed with the object.
class CusparseHandle {
 public:
  CusparseHandle() { KSPMV_CUDA_CHECK(cusparseCreate(&h_)); }
  ~CusparseHandle() {
    if (h_) cusparseDestroy(h_);
  }
  CusparseHandle(CusparseHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  CusparseHandle& operator=(CusparseHandle&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  CusparseHandle(const CusparseHandle&) = delete;
  CusparseHandle& operator=(const CusparseHandle&) = delete;
  cusparseHandle_t get() const { return h_; }

 private:
  cusparseHandle_t h_ = nullptr;
};

}  // namespace kspmv::cuda

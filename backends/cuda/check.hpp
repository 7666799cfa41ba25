// Error checking for CUDA runtime and cuSPARSE calls: every failure becomes kspmv::CudaError.
#pragma once

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <cstddef>

#include "kspmv/core/error.hpp"

namespace kspmv::cuda {

[[noreturn]] void throw_cuda_error(const char* call, cudaError_t code);
[[noreturn]] void throw_cusparse_error(const char* call, cusparseStatus_t code);
// Throws DeviceOutOfMemory with the requested, free and total bytes of the current device.
[[noreturn]] void throw_out_of_memory(const char* call, cudaError_t code, std::size_t requested);

inline void check(cudaError_t code, const char* call) {
  if (code != cudaSuccess) throw_cuda_error(call, code);
}
inline void check(cusparseStatus_t code, const char* call) {
  if (code != CUSPARSE_STATUS_SUCCESS) throw_cusparse_error(call, code);
}
// After a kernel launch: launch-configuration errors surface here.
inline void check_launch(const char* kernel) {
  check(cudaGetLastError(), kernel);
}

}  // namespace kspmv::cuda

#define KSPMV_CUDA_STRINGIFY_(x) #x
#define KSPMV_CUDA_STRINGIFY(x) KSPMV_CUDA_STRINGIFY_(x)
// Checks a CUDA runtime or cuSPARSE call; a failure's CudaError names the call with the file (as
// the compiler was given it) and the line, e.g. ".../backends/cuda/memory.cpp:62: cudaMemcpy(dst,
// host, bytes, cudaMemcpyHostToDevice) failed with code 700: cudaErrorIllegalAddress: ...".
#define KSPMV_CUDA_CHECK(expr) \
  ::kspmv::cuda::check((expr), __FILE__ ":" KSPMV_CUDA_STRINGIFY(__LINE__) ": " #expr)

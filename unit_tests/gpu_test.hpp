// What the GPU tests share: their fixture (skipped without the CUDA backend or a device) and an
// SpMV of host vectors through a kernel.
#pragma once

#include <gtest/gtest.h>

#include "kspmv/formats/csr.hpp"
#include "kspmv/registry.hpp"

#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/device_spmv.hpp"
#endif

namespace kspmv::test {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef KSPMV_HAVE_CUDA
    GTEST_SKIP() << "built without the CUDA backend";
#else
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
#endif
  }
};

#ifdef KSPMV_HAVE_CUDA
// y = alpha*A*x + beta*y through `kernel` on device copies of x and y (of m's shape), complete on
// return.
template <class S>
void run_on_device(cuda::DeviceSpmv<S>& kernel, const CsrMatrix<S>& m, S alpha, const S* x, S beta,
                   S* y) {
  cuda::DeviceBuffer<S> dx(m.ncols), dy(m.nrows);
  dx.upload(x);
  dy.upload(y);
  kernel.run(alpha, dx.data(), beta, dy.data(), nullptr);
  KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
  dy.download(y);
}
#endif

}  // namespace kspmv::test

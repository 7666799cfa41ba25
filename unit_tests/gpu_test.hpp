// The fixture of GPU tests: skipped without the CUDA backend or a device.
#pragma once

#include <gtest/gtest.h>

#include "kspmv/registry.hpp"

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

}  // namespace kspmv::test

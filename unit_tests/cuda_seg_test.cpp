// segSpMV / segSpMV-r CUDA kernels (make_seg) against the long-double oracle on the zoo and a
// 10^5-nnz row; skipped without a GPU or without the CUDA backend.
#include <gtest/gtest.h>

#include "kspmv/operator.hpp"
#include "seg_test_cases.hpp"

#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/memory.hpp"
#include "backends/cuda/seg_spmv.hpp"
#endif

namespace kspmv::test {
namespace {

template <class S>
class CudaSeg : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaSeg, Scalars);

TYPED_TEST(CudaSeg, BothVariantsMatchReferenceOnTheZooAndALongRow) {
#ifndef KSPMV_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA backend";
#else
  using S = TypeParam;
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  for (const auto& [name, a] : seg::matrices<S>()) {
    for (bool tree : {false, true}) {
      for (int len : seg::seg_lengths()) {
        SCOPED_TRACE(name + (tree ? " segSpMV-r" : " segSpMV") + " seg_length " +
                     std::to_string(len));
        seg::expect_all_cases_match_reference<S>(
            [tree, len](S alpha, const CsrMatrix<S>& m, const S* x, S beta, S* y) {
              const CsrPointers<S> host{m.row_ptr.data(), m.col_idx.data(), m.values.data(),
                                        m.nrows, m.ncols};
              const auto kernel = cuda::make_seg(host, tree, len);
              ASSERT_EQ(kernel->kernel(), tree ? Kernel::SegR : Kernel::Seg);
              cuda::DeviceBuffer<S> dx(m.ncols), dy(m.nrows);
              dx.upload(x);
              dy.upload(y);
              kernel->run(alpha, dx.data(), beta, dy.data(), nullptr);
              KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
              dy.download(y);
            },
            a);
      }
    }
  }
#endif
}

}  // namespace
}  // namespace kspmv::test

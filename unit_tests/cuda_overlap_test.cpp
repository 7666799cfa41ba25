// CSR-Partial-Overlap and CSR-Full-Overlap on the GPU (factories called directly) against the
// long-double oracle. Skipped without a CUDA build or device.
#include <gtest/gtest.h>

#include "batched_test_matrices.hpp"

#ifdef KSPMV_HAVE_CUDA
#include <memory>
#include <random>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/full_overlap.hpp"
#include "backends/cuda/partial_overlap.hpp"
#endif

namespace kspmv::test {
namespace {

template <class S>
class CudaOverlap : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef KSPMV_HAVE_CUDA
    if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
#else
    GTEST_SKIP() << "built without CUDA";
#endif
  }
};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaOverlap, Scalars);

#ifdef KSPMV_HAVE_CUDA

// Runs every matrix x parameter set x (alpha, beta) twice through the kernel `make` builds (the
// second run checks that a kernel can be reused) with y NaN-poisoned when beta == 0.
template <class S, class Make>
void expect_matches_reference(const Make& make) {
  std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::pair<S, S>> scalars = {{1, 0}, {S(-0.75), S(1.5)}, {0, S(2)}, {0, 0}};
  for (const auto& [name, a] : batched_matrices<S>()) {
    for (const auto& [pname, p] : batch_param_sets()) {
      SCOPED_TRACE(name + " / " + pname);
      std::unique_ptr<cuda::DeviceSpmv<S>> k = make(a, p);
      cuda::DeviceBuffer<S> x_d(a.ncols), y_d(a.nrows);
      cuda::Stream stream;
      for (int repeat = 0; repeat < 2; ++repeat) {
        for (const auto& [alpha, beta] : scalars) {
          const auto x = random_vector<S>(a.ncols, ++seed);
          const auto y0 = beta == S(0) ? nan_vector<S>(a.nrows) : random_vector<S>(a.nrows, ++seed);
          auto y = y0, expected = y0;
          reference::spmv(alpha, a, x.data(), beta, expected.data());
          x_d.upload(x.data());
          y_d.upload(y.data());
          k->run(alpha, x_d.data(), beta, y_d.data(), stream.get());
          stream.synchronize();
          y_d.download(y.data());
          EXPECT_LE(spmv_error(y, expected, alpha, a, x.data(), beta, y0),
                    reference::tolerance<S>())
              << "alpha " << alpha << " beta " << beta << " run " << repeat;
        }
      }
    }
  }
}

TYPED_TEST(CudaOverlap, PartialOverlapMatchesReference) {
  using S = TypeParam;
  expect_matches_reference<S>([](const CsrMatrix<S>& a, const BatchParams& p) {
    auto device =
        std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(pointers(a)));
    auto k = cuda::make_partial_overlap<S>(device, pointers(a), p);
    EXPECT_EQ(k->kernel(), Kernel::PartialOverlap);
    return k;
  });
}

TYPED_TEST(CudaOverlap, FullOverlapMatchesReference) {
  using S = TypeParam;
  expect_matches_reference<S>([](const CsrMatrix<S>& a, const BatchParams& p) {
    auto k = cuda::make_full_overlap<S>(pointers(a), p);
    EXPECT_EQ(k->kernel(), Kernel::FullOverlap);
    return k;
  });
}

TYPED_TEST(CudaOverlap, RejectsBatchesLargerThanSharedMemory) {
  using S = TypeParam;
  const auto a = random_matrix<S>(50, 50, 3, 1);
  BatchParams p;
  p.max_batch_size = Offset(1) << 24;
  EXPECT_THROW(cuda::make_full_overlap<S>(pointers(a), p), InvalidArgument);
  auto device = std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(pointers(a)));
  EXPECT_THROW(cuda::make_partial_overlap<S>(device, pointers(a), p), InvalidArgument);
}

#else

TYPED_TEST(CudaOverlap, PartialOverlapMatchesReference) {}
TYPED_TEST(CudaOverlap, FullOverlapMatchesReference) {}

#endif

}  // namespace
}  // namespace kspmv::test

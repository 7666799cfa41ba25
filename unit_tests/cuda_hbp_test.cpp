// HBP on the GPU: the GPU preprocessing (hash, and the sort2D / DP2D baselines) produces exactly
// the host's arrays, and the kernel (with its fixed/competitive split and combine part, in
// several launch plans) matches the long-double oracle on the zoo, generated families and the
// shared matrices; skipped without a GPU or the CUDA backend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "hbp_test_cases.hpp"
#include "kspmv/operator.hpp"

#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/hbp_spmv.hpp"
#endif

namespace kspmv::test {
namespace {

// Every test here runs on the GPU: skipped without the CUDA backend or without a device.
using CudaHbpTest = GpuTest;
using CudaHbpLimits = CudaHbpTest;
template <class S>
class CudaHbp : public CudaHbpTest {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaHbp, Scalars);

#ifdef KSPMV_HAVE_CUDA
// The GPU build with `reorder` equals the host's, array by array, on every test matrix and
// parameter set (Hash: also with the hash sampled on the device).
template <class S>
void expect_gpu_preprocessing_equals_host(HbpReorder reorder) {
  for (const auto& [name, a] : hbp::matrices<S>()) {
    const auto host = pointers(a);
    const auto d = cuda::DeviceCsr<S>::upload(host);
    for (const auto& p : hbp::params()) {
      SCOPED_TRACE(name + ", " + hbp::describe(p) + ", reorder " + std::to_string(int(reorder)));
      const HbpHash hash = hbp_sample_hash(host.row_ptr, host.col, host.m, host.n, p);
      const HbpMatrix<S> want = build_hbp(host, p, hash, reorder);
      const HbpMatrix<S> got = cuda::build_hbp_device(d, p, hash, reorder).download();
      EXPECT_EQ(got.block_row, want.block_row);
      EXPECT_EQ(got.block_col, want.block_col);
      EXPECT_EQ(got.table_ptr, want.table_ptr);
      EXPECT_EQ(got.group_ptr, want.group_ptr);
      EXPECT_EQ(got.begin_nnz, want.begin_nnz);
      EXPECT_EQ(got.output_hash, want.output_hash);
      EXPECT_EQ(got.combine_ptr, want.combine_ptr);
      EXPECT_EQ(got.col, want.col);
      EXPECT_EQ(got.data, want.data);
      EXPECT_EQ(got.add_sign, want.add_sign);
      EXPECT_EQ(got.dp_padded_nnz, want.dp_padded_nnz);
      if (reorder != HbpReorder::Hash) continue;
      // Without a hash, build_hbp_device samples it on the device: the host's, so the same arrays.
      const cuda::DeviceHbp<S> sampled = cuda::build_hbp_device(d, p);
      EXPECT_EQ(sampled.hash.shift, hash.shift);
      EXPECT_EQ(sampled.hash.fine, hash.fine);
      EXPECT_EQ(sampled.hash.spread, hash.spread);
      EXPECT_EQ(sampled.download().output_hash, want.output_hash);
    }
  }
}
#endif

TYPED_TEST(CudaHbp, GpuPreprocessingEqualsHostPreprocessing) {
#ifdef KSPMV_HAVE_CUDA
  expect_gpu_preprocessing_equals_host<TypeParam>(HbpReorder::Hash);
#endif
}

// The paper's sort2D and DP2D baselines built on the GPU (hbp_bench's same-processor comparison).
TYPED_TEST(CudaHbp, GpuBaselinesEqualHostBaselines) {
#ifdef KSPMV_HAVE_CUDA
  expect_gpu_preprocessing_equals_host<TypeParam>(HbpReorder::Sort);
  expect_gpu_preprocessing_equals_host<TypeParam>(HbpReorder::Dp);
#endif
}

#ifdef KSPMV_HAVE_CUDA
// Launch plans: the default; one warp per thread block, x always through the caches, no slices,
// one group per ticket; x always in shared memory, slices of 64 elements, 64 registers; 16
// warps, a dense threshold, slices of 512 and three groups per ticket.
std::vector<cuda::HbpLaunch> launches() {
  return {cuda::HbpLaunch{}, cuda::HbpLaunch{1, -1, 0, 1, 48}, cuda::HbpLaunch{4, 0, 64, 0, 64},
          cuda::HbpLaunch{16, 4, 512, 3, 48}};
}

std::string describe(const cuda::HbpLaunch& l) {
  return "warps " + std::to_string(l.warps) + ", shared_x " + std::to_string(l.shared_x) +
         ", slice " + std::to_string(l.slice_nnz) + ", ticket " + std::to_string(l.ticket_groups) +
         ", registers " + std::to_string(l.registers);
}
#endif

TYPED_TEST(CudaHbp, KernelMatchesReference) {
#ifdef KSPMV_HAVE_CUDA
  using S = TypeParam;
  for (const auto& [name, a] : hbp::matrices<S>()) {
    for (const auto& p : hbp::params()) {
      for (const auto& l : launches()) {
        SCOPED_TRACE(name + ", " + hbp::describe(p) + ", " + describe(l));
        const auto host = pointers(a);
        const auto d =
            std::make_shared<const cuda::DeviceCsr<S> >(cuda::DeviceCsr<S>::upload(host));
        const auto kernel = cuda::make_hbp(d, host, p, l);
        ASSERT_EQ(kernel->kernel(), Kernel::Hbp);
        seg::expect_all_cases_match_reference<S>(
            [&](S alpha, const CsrMatrix<S>& m, const S* x, S beta, S* y) {
              // alpha == 0 runs on a NaN-valued copy: it must not read A, so build from it too.
              if (alpha == S(0)) {
                const auto k = cuda::make_hbp<S>(nullptr, pointers(m), p, l);
                run_on_device(*k, m, alpha, x, beta, y);
              } else {
                run_on_device(*kernel, m, alpha, x, beta, y);
              }
            },
            a);
      }
    }
  }
#endif
}

TEST_F(CudaHbpLimits, BadLaunchPlansAreRefused) {
#ifdef KSPMV_HAVE_CUDA
  for (const cuda::HbpLaunch& l :
       {cuda::HbpLaunch{0, 1, 0, 0, 48}, cuda::HbpLaunch{33, 1, 0, 0, 48},
        cuda::HbpLaunch{8, 1, -1, 0, 48}, cuda::HbpLaunch{8, 1, 0, -1, 48},
        cuda::HbpLaunch{8, 1, 0, 0, 32}})
    EXPECT_THROW(cuda::check_hbp_launch(l), InvalidArgument) << describe(l);
#endif
}

// The GPU kernel's device memory (format, partial results) and the GPU build's arrays scale
// with the non-zeros, not with the grid of 2D blocks: at most 3x the device CSR's bytes where
// nearly every block holds a few entries.
TYPED_TEST(CudaHbp, DeviceMemoryIsBoundedByTheNonZerosNotByTheBlockGrid) {
#ifdef KSPMV_HAVE_CUDA
  using S = TypeParam;
  for (const char* spec : {"kmer:rows=100000", "uniform:rows=20000,cols=1000000,k=4"}) {
    const auto a = gen::from_spec<S>(spec);
    const auto host = pointers(a);
    const auto d = std::make_shared<const cuda::DeviceCsr<S> >(cuda::DeviceCsr<S>::upload(host));
    const double csr = static_cast<double>(d->bytes());
    const auto kernel = cuda::make_hbp(d, host);
    EXPECT_LE(static_cast<double>(kernel->extra_device_bytes()) / csr, 3.0) << spec;
    const HbpMatrix<S> got = cuda::build_hbp_device(*d, HbpParams{}).download();
    EXPECT_LE(got.slots(), a.nnz()) << spec;
  }
#endif
}

// A block column's x segment larger than the shared memory is read through the caches.
TEST_F(CudaHbpLimits, AnXSegmentBeyondSharedMemoryIsReadThroughTheCaches) {
#ifdef KSPMV_HAVE_CUDA
  const auto a = seg::long_row_among_short<double>();  // 100000 columns: 512 KB segments
  for (const double shared_x : {0.0, 1.0}) {
    const auto kernel = cuda::make_hbp<double>(nullptr, pointers(a), HbpParams{32, 65536, 0.5},
                                               cuda::HbpLaunch{8, shared_x, 2048, 0, 48});
    const auto x = random_vector<double>(a.ncols, seg::fresh_seed());
    const auto y0 = nan_vector<double>(a.nrows);
    auto y = y0, ref = y0;
    run_on_device(*kernel, a, 1.0, x.data(), 0.0, y.data());
    reference::spmv(1.0, a, x.data(), 0.0, ref.data());
    EXPECT_LE(spmv_error(y, ref, 1.0, a, x.data(), 0.0, y0), reference::tolerance<double>());
  }
#endif
}

TYPED_TEST(CudaHbp, KernelMatchesReferenceOnTheSharedMatrices) {
#ifdef KSPMV_HAVE_CUDA
  using S = TypeParam;
  const auto files = hbp::shared_matrix_files(3000000);
  if (files.empty()) GTEST_SKIP() << "no shared matrices";
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    const auto a = io::read_matrix_market<S>(f.string());
    const auto host = pointers(a);
    const auto d = std::make_shared<const cuda::DeviceCsr<S> >(cuda::DeviceCsr<S>::upload(host));
    const auto kernel = cuda::make_device_spmv(Kernel::Hbp, d, host);
    const auto x = random_vector<S>(a.ncols, seg::fresh_seed());
    const auto y0 = nan_vector<S>(a.nrows);
    auto y = y0, ref = y0;
    run_on_device(*kernel, a, S(1), x.data(), S(0), y.data());
    reference::spmv(S(1), a, x.data(), S(0), ref.data());
    EXPECT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), y0), reference::tolerance<S>());
  }
#endif
}

TYPED_TEST(CudaHbp, OperatorRunsHbpAndAutotuneMayPickIt) {
#ifdef KSPMV_HAVE_CUDA
  using S = TypeParam;
  const auto a = gen::from_spec<S>("laplace2d:n=300");
  for (const bool autotune : {false, true}) {
    Options o;
    o.backend = Backend::Cuda;
    o.kernel = autotune ? Kernel::Auto : Kernel::Hbp;
    o.autotune = autotune;
    Operator<S> op(a, o);
    const auto x = random_vector<S>(a.ncols, 9);
    for (int call = 0; call < 40; ++call) {  // past the autotune trials of every candidate
      const auto y0 = nan_vector<S>(a.nrows);
      auto y = y0, ref = y0;
      op.apply(S(1), x.data(), S(0), y.data());
      reference::spmv(S(1), a, x.data(), S(0), ref.data());
      ASSERT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), y0), reference::tolerance<S>())
          << "call " << call;
    }
    if (!autotune) EXPECT_EQ(op.kernel(), Kernel::Hbp);
  }
#endif
}

}  // namespace
}  // namespace kspmv::test

// Value refresh on the GPU (DeviceSpmv::update_values): every CUDA kernel of the registry, each
// family with other plans (lanes, long-row thresholds, batches, segment lengths, HBP blocks, the
// host-built HBP), and the multi-device executor. Each kernel is built, run, refreshed twice
// with new random values of the same pattern (kernels on a DeviceCsr after the values are copied
// there, as the operator does) and run again against the oracle on the new values, y
// NaN-poisoned when beta == 0; alpha == 0 runs after a refresh to NaN values. The refreshed
// source is overwritten with NaN once the refresh is enqueued (a kernel must not keep reading
// it); the kernel, and its device memory after the first refresh, must not change. Skipped
// without the CUDA backend or a device.
#include <gtest/gtest.h>

#include "batched_test_matrices.hpp"
#include "gpu_test.hpp"
#include "hbp_test_cases.hpp"
#include "kspmv/operator.hpp"
#include "refresh_test_cases.hpp"

#ifdef KSPMV_HAVE_CUDA
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/full_overlap.hpp"
#include "backends/cuda/hbp_spmv.hpp"
#include "backends/cuda/multi_device.hpp"
#include "backends/cuda/partial_overlap.hpp"
#include "backends/cuda/seg_spmv.hpp"
#endif

namespace kspmv::test {
namespace {

template <class S>
class CudaRefresh : public GpuTest {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaRefresh, Scalars);

#ifdef KSPMV_HAVE_CUDA

using refresh::Apply;
using refresh::expect_alpha_zero_ignores;
using refresh::expect_matches;
using refresh::refresh_matrices;
using refresh::unsorted_with_duplicates;
using refresh::with_values;

// Builds the kernel under test on the uploaded matrix (null for kernels without a DeviceCsr)
// and the same matrix on the host.
template <class S>
using Make = std::function<std::unique_ptr<cuda::DeviceSpmv<S>>(
    std::shared_ptr<const cuda::DeviceCsr<S>>, const CsrPointers<S>&)>;

// Where a refresh takes its values from.
enum class From { Device, Host };

template <class S>
void expect_refresh_works(const CsrMatrix<S>& a, bool uses_device_csr, const Make<S>& make,
                          const std::string& what, std::vector<From> sources = {From::Device}) {
  SCOPED_TRACE(what);
  std::uint64_t seed = seg::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto host = pointers(a);
  std::shared_ptr<cuda::DeviceCsr<S>> d;
  if (uses_device_csr) d = std::make_shared<cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(host));
  const auto k = make(d, host);
  const Kernel kernel = k->kernel();
  cuda::Stream stream;
  cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows), dv(a.nnz());
  const Apply<S> apply = [&](S alpha, const S* x, S beta, S* y) {
    dx.upload(x);
    dy.upload(y);
    k->run(alpha, dx.data(), beta, dy.data(), stream.get());
    stream.synchronize();
    dy.download(y);
  };
  // As the operator does: the values copied into the DeviceCsr first when the kernel runs on
  // one, then the kernel refreshes; all on `stream`, the source poisoned right after.
  const auto refresh = [&](const std::vector<S>& v, From from) {
    dv.upload(v.data());
    const S* values = from == From::Host ? v.data() : dv.data();
    if (d && dv.bytes() > 0) {
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(d->val.data(), dv.data(), dv.bytes(),
                                       cudaMemcpyDeviceToDevice, stream.get()));
      values = d->val.data();
    }
    k->update_values(values, stream.get());
    if (dv.bytes() > 0)  // all bits set: NaN
      KSPMV_CUDA_CHECK(cudaMemsetAsync(dv.data(), 0xff, dv.bytes(), stream.get()));
    stream.synchronize();
  };
  expect_matches(apply, a, seed, "before a refresh");
  std::size_t bytes_after_first = 0;
  for (const From from : sources) {
    for (int round = 1; round <= 2; ++round) {
      const auto v = random_vector<S>(a.nnz(), ++seed);
      refresh(v, from);
      if (round == 1 && from == sources.front()) bytes_after_first = k->extra_device_bytes();
      EXPECT_EQ(k->extra_device_bytes(), bytes_after_first) << "allocated after the first refresh";
      EXPECT_EQ(k->kernel(), kernel);
      expect_matches(apply, with_values(a, v), seed,
                     std::string(from == From::Host ? "host" : "device") + " refresh " +
                         std::to_string(round));
    }
  }
  const auto poison = nan_vector<S>(a.nnz());
  refresh(poison, sources.front());
  expect_alpha_zero_ignores(apply, with_values(a, poison), seed);
}

// The zoo, a 10^5-entry row, unsorted rows with duplicates, and the long-row matrices of the
// overlap tests.
template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices() {
  auto z = refresh_matrices<S>();
  z.emplace_back("mixed_long_rows", mixed_long_rows<S>(3000, 4000, 5));
  return z;
}

TYPED_TEST(CudaRefresh, EveryKernelOfTheRegistry) {
  using S = TypeParam;
  for (const auto& row : cuda::kernel_table<S>()) {
    std::vector<From> from = {From::Device};
    if (row.info.kernel == Kernel::FullOverlap) from.push_back(From::Host);  // streams from host
    for (const auto& [name, a] : matrices<S>())
      expect_refresh_works<S>(a, row.uses_device_csr, row.make,
                              std::string(to_string(row.info.kernel)) + " " + name, from);
  }
}

TYPED_TEST(CudaRefresh, CsrVectorKeepsItsLanesAndLongRows) {
  using S = TypeParam;
  for (const auto& [name, a] : matrices<S>())
    for (const int lanes : {1, 4, 32})
      for (const Offset threshold : {Offset(0), Offset(16)})
        expect_refresh_works<S>(
            a, true,
            [=](std::shared_ptr<const cuda::DeviceCsr<S>> d, const CsrPointers<S>& h) {
              return cuda::make_csr_vector<S>(std::move(d), h, {lanes, threshold});
            },
            "csr-vector " + name + " lanes " + std::to_string(lanes) + " threshold " +
                std::to_string(threshold));
}

TYPED_TEST(CudaRefresh, OverlapKernelsKeepTheirBatches) {
  using S = TypeParam;
  for (const auto& [name, a] : batched_matrices<S>())
    for (const auto& [pname, p] : batch_param_sets()) {
      const BatchParams params = p;
      expect_refresh_works<S>(
          a, true,
          [params](std::shared_ptr<const cuda::DeviceCsr<S>> d, const CsrPointers<S>& h) {
            return cuda::make_partial_overlap<S>(std::move(d), h, params);
          },
          "partial-overlap " + name + " / " + pname);
      expect_refresh_works<S>(
          a, false,
          [params](std::shared_ptr<const cuda::DeviceCsr<S>>, const CsrPointers<S>& h) {
            return cuda::make_full_overlap<S>(h, params);
          },
          "full-overlap " + name + " / " + pname, {From::Device, From::Host});
    }
}

TYPED_TEST(CudaRefresh, SegKeepsItsSegments) {
  using S = TypeParam;
  for (const auto& [name, a] : refresh_matrices<S>())
    for (const bool tree : {false, true})
      for (const int len : seg::seg_lengths())
        expect_refresh_works<S>(
            a, false,
            [=](std::shared_ptr<const cuda::DeviceCsr<S>>, const CsrPointers<S>& h) {
              return cuda::make_seg<S>(h, tree, len);
            },
            std::string(tree ? "seg-r " : "seg ") + name + " seg_length " + std::to_string(len));
}

// Built on the GPU (sorted rows and a DeviceCsr) or on the host (unsorted rows, or none).
TYPED_TEST(CudaRefresh, HbpKeepsItsBlocksAndRowOrder) {
  using S = TypeParam;
  auto all = hbp::matrices<S>();
  all.emplace_back("unsorted_with_duplicates", unsorted_with_duplicates<S>(700, 900, 7));
  for (const auto& [name, a] : all)
    for (const auto& p : hbp::params())
      for (const bool on_device : {true, false})
        expect_refresh_works<S>(
            a, on_device,
            [p](std::shared_ptr<const cuda::DeviceCsr<S>> d, const CsrPointers<S>& h) {
              return cuda::make_hbp<S>(std::move(d), h, p);
            },
            "hbp " + name + ", " + hbp::describe(p) +
                (on_device ? ", from the DeviceCsr" : ", built on the host"));
}

// The executor: every piece takes its non-zero range and its kernel refreshes; the plan, the
// exchange and the kernels of the blocks are kept.
TYPED_TEST(CudaRefresh, MultiDeviceExecutorRefreshesEveryPiece) {
  using S = TypeParam;
  using part::Exchange;
  using part::Scheme;
  std::vector<std::vector<int>> lists = {{0, 0, 0}};
  if (cuda_device_count() >= 2) lists.push_back({0, 1});
  for (const auto& [name, a] : refresh_matrices<S>())
    for (const Scheme s : {Scheme::NZ, Scheme::TwoNZ, Scheme::LRARC, Scheme::PCSR, Scheme::PCOO})
      for (const Exchange e : {Exchange::AllGather, Exchange::Merge, Exchange::Halo}) {
        if (!part::exchange_applies(s, e)) continue;
        for (const Kernel kernel : {Kernel::Auto, Kernel::Seg, Kernel::Hbp})
          for (const auto& devices : lists) {
            const int nd = static_cast<int>(devices.size());
            const auto plan =
                part::partition(a.row_ptr.data(), a.nrows, a.ncols, part::PartitionOptions{s, nd});
            cuda::MultiDeviceSpmv<S> md(pointers(a), plan, {e, devices, kernel});
            SCOPED_TRACE(name + " " + part::to_string(s) + " " + to_string(e) + " " +
                         to_string(kernel) + " N=" + std::to_string(nd));
            std::uint64_t seed = seg::fresh_seed();
            SCOPED_TRACE("seed " + std::to_string(seed));
            const Apply<S> apply = [&](S alpha, const S* x, S beta, S* y) {
              md.apply(alpha, x, beta, y);
            };
            const auto kernels = md.block_kernels();
            const std::size_t traffic = md.exchange_bytes();
            expect_matches(apply, a, seed, "before a refresh");
            for (int round = 1; round <= 2; ++round) {
              const auto v = random_vector<S>(a.nnz(), ++seed);
              md.update_values(v.data());
              expect_matches(apply, with_values(a, v), seed,
                             "after refresh " + std::to_string(round));
            }
            const auto poison = nan_vector<S>(a.nnz());
            md.update_values(poison.data());
            expect_alpha_zero_ignores(apply, with_values(a, poison), seed);
            EXPECT_EQ(md.block_kernels(), kernels);
            EXPECT_EQ(md.exchange(), e);
            EXPECT_EQ(md.exchange_bytes(), traffic);
          }
      }
}

#else

TYPED_TEST(CudaRefresh, EveryKernelOfTheRegistry) {}

#endif

}  // namespace
}  // namespace kspmv::test

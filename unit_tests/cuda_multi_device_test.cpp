// The CUDA multi-device executor against the long-double oracle: every scheme x applicable
// exchange on the zoo and long-row matrices, float and double, host and device vectors, on one
// device, on the same device listed several times (exchange logic on a one-GPU machine) and on
// distinct GPUs when present. Bytes exchanged must equal the host emulation's. Skips without GPU.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/host/multi_device.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/solvers/cg.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/cg_multi.hpp"
#include "backends/cuda/multi_device.hpp"
#endif

namespace kspmv::test {
namespace {

#ifdef KSPMV_HAVE_CUDA

using part::Exchange;
using part::Scheme;

template <class S>
class CudaMultiDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  }
};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaMultiDeviceTest, Scalars);

// One GPU alone, listed twice and three times; two GPUs (twice each) when present.
std::vector<std::vector<int>> device_lists() {
  std::vector<std::vector<int>> lists = {{0}, {0, 0}, {0, 0, 0}};
  if (cuda_device_count() >= 2) {
    lists.push_back({0, 1});
    lists.push_back({1, 0, 1, 0});
  }
  return lists;
}

template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices() {
  auto z = zoo<S>();
  for (Ordinal at : {0, 150, 299}) {  // a 5000-long row at the top, middle, bottom
    std::vector<std::tuple<Ordinal, Ordinal, double>> t;
    for (Ordinal j = 0; j < 5000; ++j) t.emplace_back(at, j, 1.0 + j % 3);
    for (Ordinal i = 0; i < 300; ++i)
      for (Ordinal k = 0; k < 1 + i % 6; ++k) t.emplace_back(i, (i * 13 + k * 97) % 5000, 0.5 - k);
    z.emplace_back("long_row_at_" + std::to_string(at), from_triplets<S>(300, 5000, t));
  }
  z.emplace_back("square_4000", random_matrix<S>(4000, 4000, 9, 5));
  return z;
}

template <class S>
part::PartitionPlan plan_for(const CsrMatrix<S>& a, Scheme s, int nd) {
  return part::partition(a.row_ptr.data(), a.nrows, a.ncols, part::PartitionOptions{s, nd});
}

const std::vector<std::pair<double, double>> kScalars = {{1.5, 0.0}, {-0.75, 2.0}, {0.0, 0.5}};

TYPED_TEST(CudaMultiDeviceTest, EverySchemeAndExchangeMatchesReferenceWithHostVectors) {
  using S = TypeParam;
  std::uint64_t seed = 1;
  for (const auto& [name, a] : matrices<S>())
    for (Scheme s : part::all_schemes()) {
      if (s == Scheme::PCSC) continue;  // not supported by the CUDA executor
      for (Exchange e : {Exchange::AllGather, Exchange::Merge, Exchange::Halo}) {
        if (!part::exchange_applies(s, e)) continue;
        for (const auto& devices : device_lists()) {
          const int nd = static_cast<int>(devices.size());
          const auto plan = plan_for(a, s, nd);
          cuda::MultiDeviceSpmv<S> md(pointers(a), plan, {e, devices, Kernel::Auto});
          const std::string what =
              name + " " + part::to_string(s) + " " + to_string(e) + " N=" + std::to_string(nd);
          host::MultiDeviceHost<S> emulation(a, plan, e);
          std::size_t received = 0;
          for (const auto& t : emulation.exchange_bytes()) received += t.bytes_received;
          EXPECT_EQ(md.exchange_bytes(), received) << what;
          for (const auto& [alpha_d, beta_d] : kScalars) {
            const S alpha = static_cast<S>(alpha_d), beta = static_cast<S>(beta_d);
            const auto x = random_vector<S>(a.ncols, ++seed);
            const auto y0 =
                beta == S(0) ? nan_vector<S>(a.nrows) : random_vector<S>(a.nrows, ++seed);
            auto y = y0, ref = y0;
            reference::spmv(alpha, a, x.data(), beta, ref.data());
            md.apply(alpha, x.data(), beta, y.data());
            EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), beta, y0), reference::tolerance<S>())
                << what << " alpha=" << alpha_d << " beta=" << beta_d;
          }
        }
      }
    }
}

TYPED_TEST(CudaMultiDeviceTest, DeviceVectorsEndWhereEachExchangePutsThem) {
  using S = TypeParam;
  const auto a = random_matrix<S>(3000, 3000, 7, 21);
  std::uint64_t seed = 100;
  for (Scheme s : {Scheme::NZ, Scheme::TwoNZ, Scheme::LRA, Scheme::LRARC, Scheme::PCSR})
    for (Exchange e : {Exchange::AllGather, Exchange::Merge, Exchange::Halo}) {
      if (!part::exchange_applies(s, e)) continue;
      for (const auto& devices : device_lists()) {
        const int nd = static_cast<int>(devices.size());
        cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, s, nd), {e, devices, Kernel::Auto});
        const std::string what =
            std::string(part::to_string(s)) + " " + to_string(e) + " N=" + std::to_string(nd);
        const auto x = random_vector<S>(a.ncols, ++seed);
        const auto y0 = random_vector<S>(a.nrows, ++seed);
        auto ref = y0;
        reference::spmv(S(2), a, x.data(), S(0.5), ref.data());
        auto dx = md.make_vector(), dy = md.make_vector();
        md.upload(x.data(), a.ncols, dx);
        md.upload(y0.data(), a.nrows, dy);
        md.apply(S(2), dx, S(0.5), dy);
        std::vector<S> y(a.nrows);
        md.download(dy, a.nrows, y.data());  // device 0, or gathered from the owners
        EXPECT_LE(spmv_error(y, ref, S(2), a, x.data(), S(0.5), y0), reference::tolerance<S>())
            << what;
        if (e == Exchange::Merge) md.broadcast(dy);
        if (e != Exchange::Halo) {  // every replica holds the whole y
          for (int d = 1; d < nd; ++d) {
            std::vector<S> replica(a.nrows);
            KSPMV_CUDA_CHECK(cudaMemcpy(replica.data(), dy.data(d), a.nrows * sizeof(S),
                                        cudaMemcpyDeviceToHost));
            EXPECT_EQ(replica, y) << what << " replica " << d;
          }
        }
      }
    }
}

TYPED_TEST(CudaMultiDeviceTest, LocalKernelsThenSharedRowsEqualAllGatherApply) {
  using S = TypeParam;
  const auto a = random_matrix<S>(2500, 2500, 6, 8);
  for (const auto& devices : device_lists()) {
    const int nd = static_cast<int>(devices.size());
    cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, Scheme::TwoNZ, nd),
                                {Exchange::AllGather, devices, Kernel::CsrVector});
    const auto x = random_vector<S>(a.ncols, 5 + nd);
    std::vector<S> ref(a.nrows);
    reference::spmv(S(1), a, x.data(), S(0), ref.data());
    auto dx = md.make_vector(), dy = md.make_vector();
    md.upload(x.data(), a.ncols, dx);
    md.apply_local(S(1), dx, S(0), dy);
    md.share_owned_rows(dy);
    for (int d = 0; d < nd; ++d) {
      std::vector<S> y(a.nrows);
      KSPMV_CUDA_CHECK(
          cudaMemcpy(y.data(), dy.data(d), a.nrows * sizeof(S), cudaMemcpyDeviceToHost));
      EXPECT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), {}), reference::tolerance<S>())
          << "N=" << nd << " device " << d;
    }
  }
}

TYPED_TEST(CudaMultiDeviceTest, TimingsSplitKernelAndExchangePerDevice) {
  using S = TypeParam;
  const auto a = random_matrix<S>(20000, 20000, 8, 9);
  cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, Scheme::NZ, 2),
                              {Exchange::AllGather, {0, 0}, Kernel::Auto});
  const auto x = random_vector<S>(a.ncols, 3);
  std::vector<S> y(a.nrows);
  md.apply(S(1), x.data(), S(0), y.data());
  ASSERT_EQ(md.timings().size(), 2u);
  for (const auto& t : md.timings()) {
    EXPECT_GT(t.kernel_ms, 0);
    EXPECT_GE(t.total_ms, t.kernel_ms);
    EXPECT_NEAR(t.exchange_ms, t.total_ms - t.kernel_ms, 1e-9);
  }
}

// Multi-GPU CG (AllGather, Halo, CG(comp)) converges like the host CG on a 2D Laplacian.
TYPED_TEST(CudaMultiDeviceTest, CgVariantsConvergeLikeHostCg) {
  using S = TypeParam;
  const double tol = std::is_same_v<S, float> ? 1e-5 : 1e-10;
  const auto a = gen::laplace2d<S>(60, 50);
  const auto b = random_vector<S>(a.nrows, 17);
  Operator<S> op(a);
  std::vector<S> x_host(a.ncols, S(0));
  const CgResult host = cg(op, b.data(), x_host.data(), {tol, 3000});
  ASSERT_TRUE(host.converged);
  struct Variant {
    Scheme scheme;
    Exchange exchange;
    bool comp;
  };
  for (const auto& devices : device_lists())
    for (const Variant v :
         {Variant{Scheme::NZ, Exchange::AllGather, false},
          Variant{Scheme::LRARC, Exchange::AllGather, false},
          Variant{Scheme::TwoNZ, Exchange::Halo, false}, Variant{Scheme::NZ, Exchange::Halo, false},
          Variant{Scheme::TwoNZ, Exchange::AllGather, true}}) {
      const int nd = static_cast<int>(devices.size());
      cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, v.scheme, nd),
                                  {v.exchange, devices, Kernel::Auto});
      std::vector<S> x(a.ncols, S(0));
      const CgResult res = cuda::cg_multi(md, b.data(), x.data(), {tol, 3000}, v.comp);
      const std::string what = std::string(part::to_string(v.scheme)) + " " +
                               to_string(v.exchange) + (v.comp ? " comp" : "") +
                               " N=" + std::to_string(nd);
      EXPECT_TRUE(res.converged) << what;
      EXPECT_LE(res.relative_residual, 10 * tol) << what;
      EXPECT_NEAR(res.iterations, host.iterations, 0.1 * host.iterations + 3) << what;
    }
}

TEST(CudaMultiDeviceErrorsTest, RejectsBadPlansDevicesAndExchanges) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  const auto a = random_matrix<double>(100, 100, 4, 1), b = random_matrix<double>(90, 100, 4, 1);
  const auto pa = pointers(a);
  using MD = cuda::MultiDeviceSpmv<double>;
  EXPECT_THROW(MD(pa, plan_for(b, Scheme::NZ, 2), {Exchange::AllGather, {0, 0}}), InvalidArgument);
  EXPECT_THROW(MD(pa, plan_for(a, Scheme::NZ, 2), {Exchange::AllGather, {0}}), InvalidArgument);
  EXPECT_THROW(MD(pa, plan_for(a, Scheme::NZ, 1), {Exchange::AllGather, {-1}}), InvalidArgument);
  EXPECT_THROW(MD(pa, plan_for(a, Scheme::PCSR, 2), {Exchange::AllGather, {0, 0}}),
               UnsupportedError);
  EXPECT_THROW(MD(pa, plan_for(a, Scheme::LRARC, 2), {Exchange::Halo, {0, 0}}), UnsupportedError);
  EXPECT_THROW(
      MD(pa, plan_for(a, Scheme::NZ, 2), {Exchange::AllGather, {0, 0}, Kernel::FullOverlap}),
      UnsupportedError);
  MD md(pa, plan_for(a, Scheme::NZ, 2), {Exchange::Merge, {0, 0}});
  auto v = md.make_vector();
  EXPECT_THROW(md.share_owned_rows(v), UnsupportedError);
}

#else

TEST(CudaMultiDeviceTest, SkippedWithoutCuda) {
  GTEST_SKIP() << "built without CUDA";
}

#endif

}  // namespace
}  // namespace kspmv::test

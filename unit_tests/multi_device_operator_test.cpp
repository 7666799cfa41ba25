// Operator over several devices (Options::devices, partition, exchange): the host backend's
// emulation on N = 2..8 for every scheme x exchange (auto included) and CG through it; the
// exchange Auto rule and the tuner's candidates; on CUDA (skipped without a GPU) every scheme x
// exchange through the Operator on the devices present (one GPU: two virtual devices 0,0), the
// exchange Auto of the executor, and the online LRA / LRA+RC tuner over its first applies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/host/multi_device.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/solvers/cg.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/multi_device.hpp"
#endif

namespace kspmv::test {
namespace {

using part::Exchange;
using part::Scheme;

const std::vector<std::string> kExchanges = {"auto", "allgather", "merge", "halo"};

// y = 1.5 A x - 0.5 y through `op`, against the reference.
template <class S>
double apply_error(Operator<S>& op, const CsrMatrix<S>& a, std::uint64_t seed) {
  const auto x = random_vector<S>(a.ncols, seed);
  const auto y0 = random_vector<S>(a.nrows, seed + 1);
  auto y = y0, ref = y0;
  reference::spmv(S(1.5), a, x.data(), S(-0.5), ref.data());
  op.apply(S(1.5), x.data(), S(-0.5), y.data());
  return spmv_error(y, ref, S(1.5), a, x.data(), S(-0.5), y0);
}

// CG from x = 0 to 1e-10 on the n x n 2-D Laplacian with random b (seed) through an Operator
// built with `o` (default: the host reference solve).
CgResult laplace_cg(int n, std::uint64_t seed, int max_iters, const Options& o = {}) {
  const auto a = gen::laplace2d<double>(n, n);
  const auto b = random_vector<double>(a.nrows, seed);
  std::vector<double> x(a.nrows, 0.0);
  Operator<double> op(a, o);
  return cg(op, b.data(), x.data(), CgOptions{1e-10, max_iters});
}

TEST(MultiDeviceOperatorHostTest, EverySchemeAndExchangeOnTwoToEightEmulatedDevices) {
  using S = double;
  std::uint64_t seed = 1;
  for (const auto& [name, a] : zoo<S>())
    for (Scheme s : part::all_schemes())
      for (const auto& e : kExchanges) {
        if (!part::exchange_applies(s, part::parse_exchange(e))) continue;
        for (int nd : {2, 3, 4, 8}) {
          Options o;
          o.devices.assign(nd, 0);
          o.partition = part::to_string(s);
          o.exchange = e;
          Operator<S> op(a, o);
          EXPECT_LE(apply_error(op, a, seed += 2), reference::tolerance<S>())
              << name << " " << o.partition << " " << e << " N=" << nd;
        }
      }
}

TEST(MultiDeviceOperatorHostTest, AllDevicesIsOneOnTheHostAndBadNamesAreRejected) {
  const auto a = random_matrix<double>(50, 50, 4, 3);
  Options o;
  o.devices = {kAllDevices};
  Operator<double> op(a, o);
  EXPECT_EQ(op.options().devices, std::vector<int>{0});
  o.devices = {0, 0};
  o.partition = "nosuch";
  EXPECT_THROW(Operator<double>(a, o), InvalidArgument);
  o.partition = "lra-rc";
  o.exchange = "halo";  // a redundant block has no single owner
  EXPECT_THROW(Operator<double>(a, o), UnsupportedError);
}

TEST(MultiDeviceOperatorHostTest, AutoTakesTheExchangeWithTheFewestBytes) {
  // Tridiagonal: Halo receives one x entry per neighbour, AllGather sends whole row blocks.
  const auto a = gen::laplace2d<double>(64, 1);
  for (int nd : {2, 4}) {
    const auto plan = part::partition(a.row_ptr.data(), a.nrows, a.ncols, {Scheme::NZ, nd});
    EXPECT_EQ(host::MultiDeviceHost<double>(a, plan, Exchange::Auto).exchange(), Exchange::Halo);
    const auto rc = part::partition(a.row_ptr.data(), a.nrows, a.ncols, {Scheme::LRARC, nd});
    EXPECT_EQ(host::MultiDeviceHost<double>(a, rc, Exchange::Auto).exchange(), Exchange::AllGather);
  }
}

TEST(MultiDeviceOperatorHostTest, TunerCandidatesStartWithTheTable3Defaults) {
  for (Scheme s : {Scheme::LRA, Scheme::LRARC})
    for (double mean : {3.0, 20.0}) {
      const auto c = part::tuning_candidates(s, mean);
      ASSERT_GE(c.size(), 3u);
      EXPECT_DOUBLE_EQ(c[0].d_l, part::table3_defaults(s, mean).d_l);
      EXPECT_DOUBLE_EQ(c[0].d_c, part::table3_defaults(s, mean).d_c);
      for (const auto& p : c) EXPECT_LE(p.d_l + p.d_c, 1.0);
    }
  EXPECT_TRUE(part::tuning_candidates(Scheme::NZ, 5).empty());
  EXPECT_EQ(part::parse_exchange("auto"), Exchange::Auto);
  EXPECT_EQ(part::exchange_candidates(Scheme::LRARC), std::vector<Exchange>{Exchange::AllGather});
}

TEST(MultiDeviceOperatorHostTest, CgOnEmulatedDevicesTakesTheOneDeviceIterations) {
  const CgResult r1 = laplace_cg(24, 5, 2000);
  ASSERT_TRUE(r1.converged);
  for (const char* p : {"nz", "lra", "lra-rc", "pcsr"}) {
    Options o;
    o.devices = {0, 0, 0, 0};
    o.partition = p;
    const CgResult r = laplace_cg(24, 5, 2000, o);
    EXPECT_TRUE(r.converged) << p;
    EXPECT_NEAR(r.iterations, r1.iterations, 2) << p;
    EXPECT_LE(r.relative_residual, 1e-9) << p;
  }
}

#ifdef KSPMV_HAVE_CUDA

class MultiDeviceOperatorCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
  // Every GPU present; one GPU: two virtual devices on it.
  static std::vector<int> devices() {
    std::vector<int> d;
    for (int i = 0; i < cuda_device_count(); ++i) d.push_back(i);
    if (d.size() == 1) d.push_back(0);
    return d;
  }
};

TEST_F(MultiDeviceOperatorCudaTest, EverySchemeAndExchangeThroughTheOperator) {
  using S = double;
  std::uint64_t seed = 1;
  for (const auto& [name, a] : zoo<S>())
    for (Scheme s : part::all_schemes()) {
      if (s == Scheme::PCSC) continue;  // host only
      for (const auto& e : kExchanges) {
        if (!part::exchange_applies(s, part::parse_exchange(e))) continue;
        Options o;
        o.backend = Backend::Cuda;
        o.devices = devices();
        o.partition = part::to_string(s);
        o.exchange = e;
        Operator<S> op(a, o);
        // The tuner (LRA, LRA+RC) switches executors during the first applies: all correct.
        for (int k = 0; k < 12; ++k)
          EXPECT_LE(apply_error(op, a, seed += 2), reference::tolerance<S>())
              << name << " " << o.partition << " " << e << " apply " << k;
        const Timings t = op.timings();
        EXPECT_EQ(t.devices.size(), o.devices.size());
        for (const auto& d : t.devices) EXPECT_LE(d.kernel_ms, d.total_ms + 1e-3);
      }
    }
}

TEST_F(MultiDeviceOperatorCudaTest, ExecutorAutoTimesEveryCandidateAndKeepsTheFastest) {
  using S = float;
  const auto a = gen::laplace2d<S>(200, 200);
  const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  for (auto use : {part::ExchangeUse::Apply, part::ExchangeUse::Iterative}) {
    const auto plan =
        part::partition(a.row_ptr.data(), a.nrows, a.ncols, {Scheme::NZ, int(devices().size())});
    cuda::MultiDeviceSpmv<S> md(host, plan, {Exchange::Auto, devices(), Kernel::Auto, use});
    ASSERT_EQ(md.exchange_trials().size(), 3u);
    double fastest = md.exchange_trials()[0].ms;
    for (const auto& t : md.exchange_trials()) fastest = std::min(fastest, t.ms);
    for (const auto& t : md.exchange_trials())
      if (t.exchange == md.exchange()) EXPECT_EQ(t.ms, fastest);
    const auto x = random_vector<S>(a.ncols, 3);
    const auto y0 = nan_vector<S>(a.nrows);
    auto y = y0, ref = y0;
    reference::spmv(S(1), a, x.data(), S(0), ref.data());
    md.apply(S(1), x.data(), S(0), y.data());
    EXPECT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), y0), reference::tolerance<S>());
  }
}

TEST_F(MultiDeviceOperatorCudaTest, CgThroughTheOperatorTakesTheHostIterations) {
  const CgResult ref = laplace_cg(40, 9, 3000);
  Options o;
  o.backend = Backend::Cuda;
  o.devices = devices();
  o.partition = "lra";
  const CgResult r = laplace_cg(40, 9, 3000, o);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.iterations, ref.iterations, 2);
  EXPECT_LE(r.relative_residual, 1e-9);
}

#endif

}  // namespace
}  // namespace kspmv::test

// Operator over several devices (Options::devices, partition, exchange): the host backend's
// emulation on N = 2..8 for every scheme x exchange (auto included) and CG through it; the
// exchange Auto rule and the tuner's candidates; on CUDA (skipped without a GPU) every scheme x
// exchange through the Operator on the devices present (one GPU: two virtual devices 0,0), the
// exchange Auto of the executor, and the online LRA / LRA+RC tuner over its first applies.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "backends/kokkos/multi_device.hpp"
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
      for (Exchange e : part::all_exchanges()) {
        if (!part::exchange_applies(s, e)) continue;
        for (int nd : {2, 3, 4, 8}) {
          Options o;
          o.devices.assign(nd, 0);
          o.partition = s;
          o.exchange = e;
          Operator<S> op(a, o);
          EXPECT_LE(apply_error(op, a, seed += 2), reference::tolerance<S>())
              << name << " " << part::to_string(s) << " " << part::to_string(e) << " N=" << nd;
        }
      }
}

// Options::chunks: NZ in four blocks a device through the Operator, and CG on them; chunks for
// another scheme, or out of range, are refused.
TEST(MultiDeviceOperatorHostTest, NzInChunksThroughTheOperator) {
  const auto a = gen::laplace2d<double>(30, 30);
  for (Exchange e : part::all_exchanges()) {
    Options o;
    o.devices.assign(3, 0);
    o.exchange = e;
    o.chunks = 4;
    Operator<double> op(a, o);
    EXPECT_LE(apply_error(op, a, 5), reference::tolerance<double>()) << part::to_string(e);
  }
  Options o;
  o.devices.assign(2, 0);
  o.exchange = Exchange::Halo;
  o.chunks = 4;
  const CgResult chunked = laplace_cg(30, 7, 500, o), one = laplace_cg(30, 7, 500);
  EXPECT_TRUE(chunked.converged);
  EXPECT_NEAR(chunked.iterations, one.iterations, 2);
  o.chunks = 0;
  EXPECT_THROW(Operator<double>(a, o), InvalidArgument);
  o.chunks = 2, o.partition = Scheme::LRA;
  EXPECT_THROW(Operator<double>(a, o), InvalidArgument);
}

TEST(MultiDeviceOperatorHostTest, AllDevicesIsOneOnTheHostAndBadNamesAreRejected) {
  const auto a = random_matrix<double>(50, 50, 4, 3);
  Options o;
  o.devices = {kAllDevices};
  Operator<double> op(a, o);
  EXPECT_EQ(op.options().devices, std::vector<int>{0});
  o.devices = {0, 0};
  // A name is turned into the enum once, where it enters; a bad one is refused with every valid
  // name.
  for (const auto& [what, names] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"scheme", {"rows", "nz", "2nz", "lra", "lra-rc", "pcsr", "pcsc", "pcoo"}},
           {"exchange", {"allgather", "merge", "halo", "allgather-x", "auto"}}}) {
    try {
      what == "scheme" ? (void)part::parse_scheme("nosuch") : (void)part::parse_exchange("nosuch");
      ADD_FAILURE() << what << " 'nosuch' accepted";
    } catch (const InvalidArgument& e) {
      for (const auto& name : names)
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  o.partition = Scheme::LRARC;
  o.exchange = Exchange::Halo;  // a redundant block has no single owner
  EXPECT_THROW(Operator<double>(a, o), UnsupportedError);
  o.devices = {0};  // refused on one device too: the options are checked whatever the others
  EXPECT_THROW(Operator<double>(a, o), UnsupportedError);
}

// Auto is the tuner's rule on a steady clock: every candidate timed, the smallest median kept;
// one candidate (LRA+RC: AllGather alone) is kept untimed.
TEST(MultiDeviceOperatorHostTest, AutoTimesEveryCandidateAndKeepsTheSmallestMedian) {
  const auto a = gen::laplace2d<double>(64, 40);
  for (int nd : {2, 4}) {
    const auto plan = part::partition(a.row_ptr.data(), a.nrows, a.ncols, {Scheme::NZ, nd});
    const host::MultiDeviceHost<double> md(a, plan, Exchange::Auto);
    const auto& trials = md.trials();
    ASSERT_EQ(trials.size(), 3u) << nd;
    int kept = 0;
    for (const auto& t : trials) {
      EXPECT_EQ(t.choice, "exchange");
      EXPECT_EQ(t.runs, kTuneRuns);
      EXPECT_GT(t.median_ms, 0);
      if (!t.kept) continue;
      ++kept;
      EXPECT_EQ(t.candidate, to_string(md.exchange()));
      for (const auto& u : trials) EXPECT_LE(t.median_ms, u.median_ms);
    }
    EXPECT_EQ(kept, 1);
    const auto rc = part::partition(a.row_ptr.data(), a.nrows, a.ncols, {Scheme::LRARC, nd});
    const host::MultiDeviceHost<double> one(a, rc, Exchange::Auto);
    EXPECT_EQ(one.exchange(), Exchange::AllGather);
    ASSERT_EQ(one.trials().size(), 1u);
    EXPECT_TRUE(one.trials()[0].kept);
    EXPECT_EQ(one.trials()[0].runs, 0);
  }
  Options o;
  o.devices = {0, 0};
  Operator<double> op(a, o);  // exchange auto by default: the trials reach Timings
  EXPECT_EQ(op.timings().trials.size(), 3u);
  EXPECT_FALSE(op.timings().tuning);
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

// Vectors of the operator's layout (one host array on the host backend): upload, apply on
// them, download; vectors of another operator and wrong lengths are refused.
TEST(MultiDeviceOperatorHostTest, DistributedVectorsApplyAndForeignOnesAreRefused) {
  const auto a = random_matrix<double>(300, 200, 5, 4);
  for (const std::vector<int>& devices : {std::vector<int>{0}, std::vector<int>{0, 0, 0}}) {
    Options o;
    o.devices = devices;
    o.exchange = Exchange::Halo;
    Operator<double> op(a, o);
    const auto x = random_vector<double>(200, 5), y0 = random_vector<double>(300, 6);
    auto ref = y0;
    reference::spmv(1.5, a, x.data(), -0.5, ref.data());
    const auto dx = op.make_vector(), dy = op.make_vector();
    op.upload(x.data(), 200, dx);
    op.upload(y0.data(), 300, dy);
    op.apply(1.5, dx, -0.5, dy);
    std::vector<double> y(300);
    op.download(dy, 300, y.data());
    EXPECT_LE(spmv_error(y, ref, 1.5, a, x.data(), -0.5, y0), reference::tolerance<double>());
    Operator<double> other(a, o);
    EXPECT_THROW(op.apply(1.0, other.make_vector(), 0.0, dy), InvalidArgument);
    EXPECT_THROW(op.apply(1.0, dy, 0.0, dy), InvalidArgument);
    EXPECT_THROW(op.upload(x.data(), 7, dx), InvalidArgument);
    EXPECT_THROW(op.download(dy, 200, y.data()), InvalidArgument);
    EXPECT_TRUE(op.parts().empty());  // the emulation has no parts on devices to report
    EXPECT_THROW(op.predict({}, 394, 3000), UnsupportedError);
    EXPECT_THROW(op.cg_vectors(), InvalidArgument);  // not square
  }
}

TEST(MultiDeviceOperatorHostTest, CgOnEmulatedDevicesTakesTheOneDeviceIterations) {
  const CgResult r1 = laplace_cg(24, 5, 2000);
  ASSERT_TRUE(r1.converged);
  for (Scheme p : {Scheme::NZ, Scheme::LRA, Scheme::LRARC, Scheme::PCSR}) {
    Options o;
    o.devices = {0, 0, 0, 0};
    o.partition = p;
    const CgResult r = laplace_cg(24, 5, 2000, o);
    EXPECT_TRUE(r.converged) << part::to_string(p);
    EXPECT_NEAR(r.iterations, r1.iterations, 2) << part::to_string(p);
    EXPECT_LE(r.relative_residual, 1e-9) << part::to_string(p);
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
  // The CUDA backend on devices() with a partition and an exchange.
  static Options options(Scheme partition, Exchange exchange = Exchange::Auto) {
    Options o;
    o.backend = Backend::Cuda;
    o.devices = devices();
    o.partition = partition;
    o.exchange = exchange;
    return o;
  }
};

TEST_F(MultiDeviceOperatorCudaTest, EverySchemeAndExchangeThroughTheOperator) {
  using S = double;
  std::uint64_t seed = 1;
  for (const auto& [name, a] : zoo<S>())
    for (Scheme s : part::all_schemes()) {
      if (s == Scheme::PCSC) continue;  // host only
      for (Exchange e : part::all_exchanges()) {
        if (!part::exchange_applies(s, e)) continue;
        const Options o = options(s, e);
        Operator<S> op(a, o);
        // The tuner (LRA, LRA+RC) switches executors during the first applies: all correct.
        for (int k = 0; k < 12; ++k)
          EXPECT_LE(apply_error(op, a, seed += 2), reference::tolerance<S>())
              << name << " " << part::to_string(s) << " " << part::to_string(e) << " apply " << k;
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
  const auto plan =
      part::partition(a.row_ptr.data(), a.nrows, a.ncols, {Scheme::NZ, int(devices().size())});
  cuda::MultiDeviceSpmv<S> md(host, plan, {Exchange::Auto, devices(), Kernel::Auto});
  ASSERT_EQ(md.trials().size(), 3u);
  double fastest = md.trials()[0].median_ms;
  for (const auto& t : md.trials()) fastest = std::min(fastest, t.median_ms);
  for (const auto& t : md.trials()) {
    EXPECT_EQ(t.runs, kTuneRuns);
    EXPECT_EQ(t.kept, t.candidate == to_string(md.exchange()));
    if (t.kept) EXPECT_EQ(t.median_ms, fastest);
  }
  EXPECT_GT(md.tune_ms(), 0);
  const auto x = random_vector<S>(a.ncols, 3);
  const auto y0 = nan_vector<S>(a.nrows);
  auto y = y0, ref = y0;
  reference::spmv(S(1), a, x.data(), S(0), ref.data());
  md.apply(S(1), x.data(), S(0), y.data());
  EXPECT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), y0), reference::tolerance<S>());
}

// The set-up's parts are reported; the LRA tuner runs on the first applies, reports each
// candidate and keeps one; distributed vectors end it.
TEST_F(MultiDeviceOperatorCudaTest, SetUpIsSplitAndTheTunersReportWhatTheyTried) {
  using S = double;
  const auto a = gen::laplace2d<S>(300, 200);
  for (Scheme partition : {Scheme::LRA, Scheme::LRARC}) {
    const Options o = options(partition);
    Operator<S> op(a, o);
    Timings t = op.timings();
    EXPECT_GT(t.partition_ms, 0) << part::to_string(partition);
    EXPECT_GT(t.upload_ms, 0) << part::to_string(partition);
    EXPECT_GT(t.setup_ms, 0) << part::to_string(partition);
    EXPECT_LE(t.partition_ms + t.upload_ms + t.setup_ms + t.tune_ms, t.preprocess_ms + 1e-6);
    EXPECT_TRUE(t.tuning) << part::to_string(partition);
    int applies = 0;
    while (op.timings().tuning && applies < 100) {
      EXPECT_LE(apply_error(op, a, 11 + applies), reference::tolerance<S>())
          << part::to_string(partition);
      ++applies;
    }
    const auto candidates = part::tuning_candidates(partition, 5.0);
    EXPECT_EQ(applies, static_cast<int>(candidates.size()) * (kTuneWarmup + kTuneRuns));
    int kept = 0, tried = 0;
    for (const auto& tr : op.timings().trials) {
      if (tr.choice != "partition") continue;
      ++tried;
      kept += tr.kept;
      EXPECT_EQ(tr.runs, kTuneRuns) << tr.candidate;
    }
    EXPECT_EQ(tried, static_cast<int>(candidates.size())) << part::to_string(partition);
    EXPECT_EQ(kept, 1) << part::to_string(partition);
    Operator<S> early(a, o);  // distributed vectors end the tuning at once
    EXPECT_TRUE(early.timings().tuning);
    early.make_vector();
    EXPECT_FALSE(early.timings().tuning);
  }
}

// Whole vectors in the first device's memory go out to the devices and come back, ordered on
// the caller's stream.
TEST_F(MultiDeviceOperatorCudaTest, DevicePointersOfTheFirstDeviceGoOutAndComeBack) {
  using S = double;
  const auto a = random_matrix<S>(5000, 5000, 7, 3);
  for (Exchange exchange :
       {Exchange::AllGather, Exchange::Merge, Exchange::Halo, Exchange::AllGatherX}) {
    const Options o = options(Scheme::NZ, exchange);
    Operator<S> op(a, o);
    const auto x = random_vector<S>(5000, 1), y0 = random_vector<S>(5000, 2);
    auto ref = y0;
    reference::spmv(S(2), a, x.data(), S(-1), ref.data());
    cuda::DeviceGuard guard(o.devices[0]);
    cuda::DeviceBuffer<S> dx(5000), dy(5000);
    dx.upload(x.data());
    dy.upload(y0.data());
    cuda::Stream stream;
    op.apply(stream.get(), S(2), dx.data(), S(-1), dy.data());
    stream.synchronize();
    std::vector<S> y(5000);
    dy.download(y.data());
    EXPECT_LE(spmv_error(y, ref, S(2), a, x.data(), S(-1), y0), reference::tolerance<S>())
        << part::to_string(exchange);
  }
}

// Each part's kernel timed alone, and the model of an apply from those times.
TEST_F(MultiDeviceOperatorCudaTest, PartsAreTimedAloneAndFeedTheCostModel) {
  using S = double;
  const auto a = gen::laplace2d<S>(400, 400);
  for (Scheme partition : {Scheme::TwoNZ, Scheme::PCSR}) {
    const Options o =
        options(partition, partition == Scheme::PCSR ? Exchange::Merge : Exchange::Halo);
    Operator<S> op(a, o);
    const auto parts = op.parts(3);
    ASSERT_FALSE(parts.empty());
    std::vector<double> ms;
    std::vector<double> per_device(o.devices.size(), 0.0);
    Offset nnz = 0;
    for (const auto& p : parts) {
      EXPECT_GT(p.kernel_ms, 0);
      EXPECT_NE(p.kernel, Kernel::Auto);
      ms.push_back(p.kernel_ms);
      per_device[p.device] += p.kernel_ms;
      nnz += p.nnz_end - p.nnz_begin;
    }
    EXPECT_EQ(nnz, a.nnz());
    const Prediction pr = op.predict(ms, 394, 3000);
    EXPECT_NEAR(pr.kernel_ms, *std::max_element(per_device.begin(), per_device.end()), 1e-12);
    EXPECT_GE(pr.ms, pr.kernel_ms);
    EXPECT_NEAR(pr.exchange_ms, pr.ms - pr.kernel_ms, 1e-12);
  }
}

TEST_F(MultiDeviceOperatorCudaTest, CgThroughTheOperatorTakesTheHostIterations) {
  const CgResult ref = laplace_cg(40, 9, 3000);
  for (Exchange exchange : {Exchange::AllGather, Exchange::Halo})
    for (bool graphs : {true, false}) {
      Options o = options(exchange == Exchange::Halo ? Scheme::NZ : Scheme::LRA, exchange);
      o.graphs = graphs;
      const CgResult r = laplace_cg(40, 9, 3000, o);
      EXPECT_TRUE(r.converged) << part::to_string(exchange) << " graphs " << graphs;
      EXPECT_NEAR(r.iterations, ref.iterations, 2)
          << part::to_string(exchange) << " graphs " << graphs;
      EXPECT_LE(r.relative_residual, 1e-9) << part::to_string(exchange) << " graphs " << graphs;
      const bool replicated = exchange == Exchange::AllGather;
      EXPECT_EQ(r.replay, !graphs      ? "step by step (graphs off)"
                          : replicated ? "step by step (vectors replicated on every device; each "
                                         "SpMV replayed alone)"
                                       : "one CUDA graph an iteration")
          << part::to_string(exchange);
    }
}

// Replayed applies (Options::graphs) on distributed vectors: every exchange (and the one the
// tuner keeps) right on fresh
// inputs, with the vectors and scalars changing between applies (each set its own graph), the
// output poisoned first; the replays are timed; new values reach the replayed kernels.
TEST_F(MultiDeviceOperatorCudaTest, ReplayedAppliesAreRightForEveryVectorAndScalarSet) {
  using S = double;
  auto a = random_matrix<S>(6000, 6000, 11, 4);
  std::uint64_t seed = 40;
  for (Scheme partition : {Scheme::NZ, Scheme::TwoNZ, Scheme::PCSR})
    for (Exchange exchange : part::all_exchanges()) {
      if (!part::exchange_applies(partition, exchange)) continue;
      Options o = options(partition, exchange);
      Operator<S> op(a, o);  // auto: the tuner's candidates alternate, each replayed
      const DistributedVector<S> xs[] = {op.make_vector(), op.make_vector()};
      const DistributedVector<S> ys[] = {op.make_vector(), op.make_vector()};
      for (int round = 0; round < 6; ++round) {
        const int k = round % 2;
        const S alpha = round < 4 ? S(1.5) : S(-2), beta = k ? S(0) : S(0.5);
        const auto x = random_vector<S>(a.ncols, ++seed), y0 = random_vector<S>(a.nrows, ++seed);
        op.upload(x.data(), a.ncols, xs[k]);
        op.upload(y0.data(), a.nrows, ys[k]);
        auto ref = y0;
        reference::spmv(alpha, a, x.data(), beta, ref.data());
        if (beta == S(0)) {  // y is only written: poisoned, it must come back whole
          std::vector<S> nan(a.nrows, std::numeric_limits<S>::quiet_NaN());
          op.upload(nan.data(), a.nrows, ys[k]);
        }
        op.apply(alpha, xs[k], beta, ys[k]);
        std::vector<S> y(a.nrows);
        op.download(ys[k], a.nrows, y.data());
        EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), beta, y0), reference::tolerance<S>())
            << part::to_string(partition) << " " << part::to_string(exchange) << " round " << round;
        const Timings t = op.timings();
        EXPECT_TRUE(t.replayed) << part::to_string(partition) << " " << part::to_string(exchange)
                                << ": " << t.replay_note;
        ASSERT_FALSE(t.devices.empty());
        for (const auto& d : t.devices) {
          EXPECT_GT(d.total_ms, 0)
              << part::to_string(partition) << " " << part::to_string(exchange);
          EXPECT_GE(d.kernel_ms, 0)
              << part::to_string(partition) << " " << part::to_string(exchange);
          EXPECT_LE(d.kernel_ms, d.total_ms + 1e-3)
              << part::to_string(partition) << " " << part::to_string(exchange);
        }
      }
      const auto negate = [&a] {
        for (std::size_t e = 0; e < a.values.extent(0); ++e) a.values(e) = -a.values(e);
      };
      negate();  // new values, the same pattern
      op.update_values(a.values);
      EXPECT_LE(apply_error(op, a, ++seed), reference::tolerance<S>())
          << part::to_string(partition) << " " << part::to_string(exchange);
      negate();
    }
}

// A caller whose applies never repeat gets them enqueued step by step after a few captures,
// and right all along.
TEST_F(MultiDeviceOperatorCudaTest, AppliesThatNeverRepeatStopBeingCaptured) {
  using S = double;
  const auto a = gen::laplace2d<S>(60, 60);
  Operator<S> op(a, options(Scheme::NZ, Exchange::Halo));
  const auto x = op.make_vector(), y = op.make_vector();
  const auto hx = random_vector<S>(a.ncols, 5);
  op.upload(hx.data(), a.ncols, x);
  for (int k = 1; k <= 20; ++k) {
    const S alpha = S(k);  // a new scalar each time
    auto ref = std::vector<S>(a.nrows, S(0));
    reference::spmv(alpha, a, hx.data(), S(0), ref.data());
    op.apply(alpha, x, S(0), y);
    std::vector<S> got(a.nrows);
    op.download(y, a.nrows, got.data());
    EXPECT_LE(reference::rel_l2_error(got.data(), ref.data(), got.size()),
              reference::tolerance<S>())
        << k;
  }
  EXPECT_FALSE(op.timings().replayed);
  EXPECT_NE(op.timings().replay_note.find("step by step"), std::string::npos);
}

// Options::choose_devices: a tiny matrix keeps one device, a large one every device given; the
// Operator lists what it uses.
TEST_F(MultiDeviceOperatorCudaTest, TheCostModelChoosesHowManyDevices) {
  using S = double;
  Options o = options(Scheme::NZ, Exchange::Halo);
  o.choose_devices = true;
  const auto small = gen::laplace2d<S>(30, 30);
  Operator<S> one(small, o);
  EXPECT_EQ(one.options().devices.size(), 1u);
  EXPECT_LE(apply_error(one, small, 3), reference::tolerance<S>());
  const auto large = gen::laplace2d<S>(2500, 2500);
  Operator<S> all(large, o);
  EXPECT_EQ(all.options().devices, devices());
  EXPECT_LE(apply_error(all, large, 4), reference::tolerance<S>());
}

#endif

}  // namespace
}  // namespace kspmv::test

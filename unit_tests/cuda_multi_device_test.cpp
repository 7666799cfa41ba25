// The CUDA multi-device executor against the long-double oracle: every scheme x applicable
// exchange on the zoo and long-row matrices, float and double, host and device vectors, on one
// device, on the same device listed several times (exchange logic on a one-GPU machine) and on
// distinct GPUs when present. Bytes exchanged and halo lists must equal the host emulation's;
// the device's row statistics equal the host's; CG through the Operator converges like the host
// CG with every exchange. Skips without GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/kokkos/multi_device.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/solvers/cg.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/cusparse_util.hpp"
#include "backends/cuda/multi_device.hpp"
#include "backends/cuda/row_profile.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "row_profile_expect.hpp"

#include "perf_tests/bench_common.hpp"
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

const std::vector<Exchange> kModes = {Exchange::AllGather, Exchange::Merge, Exchange::Halo,
                                      Exchange::AllGatherX};

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
  z.emplace_back("laplace2d_60", gen::laplace2d<S>(60, 60));  // blocks that need no halo
  return z;
}

template <class S>
part::PartitionPlan plan_for(const CsrMatrix<S>& a, Scheme s, int nd, int chunks = 1) {
  part::PartitionOptions o{s, nd};
  o.chunks = chunks;
  return part::partition(a.row_ptr.data(), a.nrows, a.ncols, o);
}

template <class S>
std::vector<S> part_of(const DistributedVector<S>& v, int d, std::size_t n) {
  std::vector<S> h(n);
  KSPMV_CUDA_CHECK(cudaMemcpy(h.data(), v.data(d), n * sizeof(S), cudaMemcpyDeviceToHost));
  return h;
}

const std::vector<std::pair<double, double>> kScalars = {{1.5, 0.0}, {-0.75, 2.0}, {0.0, 0.5}};

TYPED_TEST(CudaMultiDeviceTest, EverySchemeAndExchangeMatchesReferenceWithHostVectors) {
  using S = TypeParam;
  std::uint64_t seed = 1;
  std::vector<std::pair<Scheme, int>> schemes;  // and NZ in three chunks a device
  for (Scheme s : part::all_schemes())
    if (s != Scheme::PCSC) schemes.emplace_back(s, 1);  // pCSC: not supported by the executor
  schemes.emplace_back(Scheme::NZ, 3);
  for (const auto& [name, a] : matrices<S>())
    for (const auto& [s, chunks] : schemes) {
      for (Exchange e : kModes) {
        if (!part::exchange_applies(s, e)) continue;
        for (const auto& devices : device_lists()) {
          const int nd = static_cast<int>(devices.size());
          const auto plan = plan_for(a, s, nd, chunks);
          cuda::MultiDeviceSpmv<S> md(pointers(a), plan, {e, devices, Kernel::Auto});
          const std::string what = name + " " + part::to_string(s) + "/" + std::to_string(chunks) +
                                   " " + to_string(e) + " N=" + std::to_string(nd);
          host::MultiDeviceHost<S> emulation(a, plan, e);
          EXPECT_EQ(md.exchange_bytes(), emulation.strategy().bytes(sizeof(S))) << what;
          for (int dst = 0; dst < nd; ++dst)  // the device found the emulation's halo lists
            for (int src = 0; src < nd; ++src)
              EXPECT_EQ(md.strategy().halo_count(dst, src),
                        emulation.strategy().halo_count(dst, src))
                  << what << " " << src << " -> " << dst;
          for (std::size_t b = 0; b < plan.blocks.size(); ++b)  // and which blocks start first
            EXPECT_EQ(md.strategy().waits_for_x(static_cast<int>(b)),
                      emulation.strategy().waits_for_x(static_cast<int>(b)))
                << what << " block " << b;
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

// Pieces of more than one chunk of columns (2^22 entries, copied a chunk at a time with each
// chunk's halo marks queued behind it): the lists are still the emulation's.
TEST(CudaMultiDeviceChunks, HaloListsOverSeveralColumnChunks) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  const auto a = random_matrix<double>(1200000, 1200000, 8, 31);
  ASSERT_GT(a.nnz() / 2, Offset{1} << 22);
  for (Scheme s : {Scheme::Rows, Scheme::TwoNZ}) {
    const auto plan = plan_for(a, s, 2);
    cuda::MultiDeviceSpmv<double> md(pointers(a), plan, {Exchange::Halo, {0, 0}, Kernel::Auto});
    host::MultiDeviceHost<double> emulation(a, plan, Exchange::Halo);
    for (int dst = 0; dst < 2; ++dst)
      for (int src = 0; src < 2; ++src)
        EXPECT_EQ(md.strategy().halo_count(dst, src), emulation.strategy().halo_count(dst, src))
            << part::to_string(s) << " " << src << " -> " << dst;
    for (std::size_t b = 0; b < plan.blocks.size(); ++b)
      EXPECT_EQ(md.strategy().waits_for_x(static_cast<int>(b)),
                emulation.strategy().waits_for_x(static_cast<int>(b)))
          << part::to_string(s) << " block " << b;
    const auto x = random_vector<double>(a.ncols, 7);
    auto y = nan_vector<double>(a.nrows), ref = y;
    reference::spmv(1.0, a, x.data(), 0.0, ref.data());
    md.apply(1.0, x.data(), 0.0, y.data());
    EXPECT_LE(spmv_error(y, ref, 1.0, a, x.data(), 0.0, nan_vector<double>(a.nrows)),
              reference::tolerance<double>())
        << part::to_string(s);
  }
}

// Device vectors poisoned with NaN, then only what each device must hold uploaded: the exchange
// delivers every entry the kernels read, and y ends where the strategy says.
TYPED_TEST(CudaMultiDeviceTest, DistributedVectorsEndWhereEachExchangePutsThem) {
  using S = TypeParam;
  const auto a = random_matrix<S>(3000, 3000, 7, 21);
  std::uint64_t seed = 100;
  for (Scheme s : {Scheme::NZ, Scheme::TwoNZ, Scheme::LRA, Scheme::LRARC, Scheme::PCSR})
    for (Exchange e : kModes) {
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
        const auto dx = md.make_vector(nullptr), dy = md.make_vector(nullptr);
        for (int d = 0; d < nd; ++d) {
          cuda::DeviceGuard guard(devices[d]);
          KSPMV_CUDA_CHECK(
              cudaMemsetAsync(dx.data(d), 0xff, dx.part(d).size * sizeof(S), md.stream(d)));
          KSPMV_CUDA_CHECK(
              cudaMemsetAsync(dy.data(d), 0xff, dy.part(d).size * sizeof(S), md.stream(d)));
        }
        md.upload(x.data(), a.ncols, dx);
        md.upload(y0.data(), a.nrows, dy);
        md.apply(S(2), dx, S(0.5), dy);
        std::vector<S> y(a.nrows);
        md.download(dy, a.nrows, y.data());  // device 0, or gathered from the owners
        EXPECT_LE(spmv_error(y, ref, S(2), a, x.data(), S(0.5), y0), reference::tolerance<S>())
            << what;
        for (int d = 0; d < nd; ++d) {
          const auto part = part_of(dy, d, a.nrows);
          const auto rows = md.strategy().replicated() ? std::vector<part::Span>{{0, a.nrows}}
                                                       : md.strategy().y_home(d);
          for (const auto& sp : rows)
            for (Ordinal i = sp.begin; i < sp.begin + sp.count; ++i)
              ASSERT_EQ(part[i], y[i]) << what << " device " << d << " row " << i;
        }
      }
    }
}

// Signals (every GPU, distinct, peer access both ways): applies enqueued back to back with x
// doubled on each device's stream between them, never waiting on the host: y accumulates
// sum_k A (2^k x), which a pull that reads an owner's x too early or too late gets wrong. The
// same with the events (signals off), replayed and step by step.
TYPED_TEST(CudaMultiDeviceTest, SignalledHaloOrdersBackToBackAppliesAndOverwrites) {
  using S = TypeParam;
  const int count = cuda_device_count();
  if (count < 2) GTEST_SKIP() << "needs two CUDA devices";
  std::vector<int> devices(count);
  for (int d = 0; d < count; ++d) devices[d] = d;
  bool peers = true;
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) {
      int can = 1;
      if (a != b) KSPMV_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      peers &= can != 0;
    }
  const auto a = gen::laplace2d<S>(300, 300);
  constexpr int kApplies = 12;
  std::uint64_t seed = 40;
  for (int chunks : {1, 3})
    for (bool signals : {true, false})
      for (bool graphs : {true, false}) {
        cuda::MultiDeviceOptions o{Exchange::Halo, devices, Kernel::Auto, graphs, signals};
        cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, Scheme::NZ, count, chunks), o);
        const std::string what = "chunks " + std::to_string(chunks) + " signals " +
                                 std::to_string(signals) + " graphs " + std::to_string(graphs);
        const auto x = random_vector<S>(a.ncols, ++seed);
        const auto dx = md.make_vector(nullptr), dy = md.make_vector(nullptr);
        md.upload(x.data(), a.ncols, dx);
        for (int k = 0; k < kApplies; ++k) {
          md.apply(S(1), dx, k == 0 ? S(0) : S(1), dy);
          for (int d = 0; d < count; ++d) {
            cuda::DeviceGuard guard(devices[d]);
            cuda::scale_vector(dx.data(d), static_cast<Ordinal>(dx.part(d).size), S(2),
                               md.stream(d));
          }
        }
        EXPECT_EQ(md.signalled(), signals && peers) << what;
        EXPECT_EQ(md.replayed(), graphs) << what;
        std::vector<S> y(a.nrows), ref(a.nrows);
        const S alpha = static_cast<S>((1 << kApplies) - 1);
        reference::spmv(alpha, a, x.data(), S(0), ref.data());
        md.download(dy, a.nrows, y.data());
        EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), S(0), {}), reference::tolerance<S>())
            << what;
        for (const auto& t : md.timings()) EXPECT_GE(t.total_ms, t.kernel_ms) << what;
      }
}

// A replayed apply is kept for its vectors, not for later ones at the same addresses: CUDA's
// graphs hold what they copied between (replaying one on freed vectors took cg_bench down in
// cudaGraphLaunch). Vectors made, applied twice and freed, round after round, with the first
// apply's scalars changing so that captures and replays alternate.
TYPED_TEST(CudaMultiDeviceTest, ReplaysOfFreedVectorsAreNotReused) {
  using S = TypeParam;
  const auto a = random_matrix<S>(2000, 2000, 7, 23);
  std::uint64_t seed = 300;
  for (const auto& devices : device_lists())
    for (Exchange e : {Exchange::AllGather, Exchange::Halo}) {
      const int nd = static_cast<int>(devices.size());
      cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, Scheme::LRA, nd), {e, devices});
      for (int round = 0; round < 6; ++round) {
        const std::string what = std::string(to_string(e)) + " N=" + std::to_string(nd) +
                                 " round " + std::to_string(round);
        const auto x = random_vector<S>(a.ncols, ++seed);
        const auto dx = md.make_vector(nullptr), dy = md.make_vector(nullptr);
        md.upload(x.data(), a.ncols, dx);
        for (const S alpha : {S(1 + round % 2), S(1)}) {
          for (int d = 0; d < nd; ++d) {
            cuda::DeviceGuard guard(devices[d]);
            KSPMV_CUDA_CHECK(
                cudaMemsetAsync(dy.data(d), 0xff, dy.part(d).size * sizeof(S), md.stream(d)));
          }
          md.apply(alpha, dx, S(0), dy);
          std::vector<S> y(a.nrows, std::nan("")), ref(a.nrows);
          reference::spmv(alpha, a, x.data(), S(0), ref.data());
          md.download(dy, a.nrows, y.data());
          EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), S(0), {}), reference::tolerance<S>())
              << what;
        }
      }
    }
}

// allgather-x (CG(comp)): after an apply every device holds the whole x.
TYPED_TEST(CudaMultiDeviceTest, AllGatherXLeavesTheWholeXOnEveryDevice) {
  using S = TypeParam;
  const auto a = random_matrix<S>(2500, 2500, 6, 8);
  for (const auto& devices : device_lists()) {
    const int nd = static_cast<int>(devices.size());
    cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, Scheme::TwoNZ, nd),
                                {Exchange::AllGatherX, devices, Kernel::CsrVector});
    const auto x = random_vector<S>(a.ncols, 5 + nd);
    const auto dx = md.make_vector(nullptr), dy = md.make_vector(nullptr);
    md.upload(x.data(), a.ncols, dx);
    md.apply(S(1), dx, S(0), dy);
    md.synchronize();
    for (int d = 0; d < nd; ++d) EXPECT_EQ(part_of(dx, d, a.ncols), x) << "N=" << nd << " " << d;
    std::vector<S> y(a.nrows), ref(a.nrows);
    reference::spmv(S(1), a, x.data(), S(0), ref.data());
    md.download(dy, a.nrows, y.data());
    EXPECT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), {}), reference::tolerance<S>());
  }
}

TYPED_TEST(CudaMultiDeviceTest, TimingsSplitKernelAndExchangePerDevice) {
  using S = TypeParam;
  const auto a = random_matrix<S>(20000, 20000, 8, 9);
  cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, Scheme::NZ, 2),
                              {Exchange::AllGather, {0, 0}, Kernel::Auto});
  EXPECT_GT(md.upload_ms(), 0);
  EXPECT_GT(md.setup_ms(), 0);
  EXPECT_EQ(md.tune_ms(), 0);
  EXPECT_TRUE(md.trials().empty());
  const auto x = random_vector<S>(a.ncols, 3);
  std::vector<S> y(a.nrows);
  md.apply(S(1), x.data(), S(0), y.data());
  ASSERT_EQ(md.timings().size(), 2u);
  for (const auto& t : md.timings()) {
    EXPECT_GT(t.kernel_ms, 0);
    EXPECT_GE(t.total_ms, t.kernel_ms);
    EXPECT_NEAR(t.exchange_ms, t.total_ms - t.kernel_ms, 1e-9);
  }
  const auto blocks = md.time_blocks(3);
  ASSERT_EQ(blocks.size(), 2u);
  for (double ms : blocks) EXPECT_GT(ms, 0);
}

// The set-up's phases add up to the preprocessing's parts: the partition (LRA's longest row, the
// plan), the upload (the source's row pointer, the allocation, columns, values) and the rest,
// less the set-up's work done while the copies ran.
TYPED_TEST(CudaMultiDeviceTest, SetupPhasesAddUpToThePreprocessing) {
  using S = TypeParam;
  const auto a = random_matrix<S>(30000, 30000, 8, 4);
  for (const auto& [scheme, exchange] :
       std::vector<std::pair<Scheme, Exchange>>{{Scheme::LRA, Exchange::Halo},
                                                {Scheme::TwoNZ, Exchange::Merge},
                                                {Scheme::NZ, Exchange::Auto}}) {
    Options o;
    o.backend = Backend::Cuda, o.devices = {0, 0}, o.partition = scheme, o.exchange = exchange;
    Operator<S> op(a, o);
    const Timings t = op.timings();
    const SetupPhases& p = t.setup_phases;
    const std::string what = std::string(part::to_string(scheme)) + " " + part::to_string(exchange);
    for (double ms : {p.longest_row, p.plan, p.source, p.streams, p.allocate, p.columns, p.profile,
                      p.profile_device, p.halo_device, p.halo_links, p.values, p.kernels, p.finish})
      EXPECT_GE(ms, 0) << what;
    EXPECT_NEAR(t.partition_ms, p.longest_row + p.plan, 1e-9) << what;
    EXPECT_NEAR(t.upload_ms, p.source + p.allocate + p.columns + p.values, 1e-9) << what;
    EXPECT_NEAR(t.setup_ms, p.streams + p.profile + p.halo_links + p.kernels + p.finish - p.overlap,
                1e-9)
        << what;
    EXPECT_GT(p.columns + p.values, 0) << what;
    EXPECT_GT(p.profile_device, 0) << what;
    EXPECT_EQ(p.longest_row > 0, scheme == Scheme::LRA) << what;
    if (exchange != Exchange::Merge) EXPECT_GT(p.halo_device, 0) << what;  // auto: halo too
  }
}

// The benchmarks' check (bench::operator_error) poisons y and then applies: the poison must have
// landed before the operator's streams start. Work queued ahead of it on the legacy default
// stream (which those streams do not wait for) makes a poison that is merely queued land after
// the apply, as kmer:rows=60000000's 480 MB of y did under AllGather.
TYPED_TEST(CudaMultiDeviceTest, BenchCheckPoisonsBeforeTheApply) {
  using S = TypeParam;
  const auto a = random_matrix<S>(20000, 20000, 8, 12);
  const auto x = random_vector<S>(a.ncols, 13);
  std::vector<S> ref(a.nrows);
  reference::spmv(S(1), a, x.data(), S(0), ref.data());
  for (const auto& devices : std::vector<std::vector<int>>{{0}, {0, 0}}) {
    Options o;
    o.backend = Backend::Cuda, o.devices = devices, o.partition = Scheme::NZ,
    o.exchange = Exchange::AllGather;
    Operator<S> op(a, o);
    const auto dx = op.make_vector(), dy = op.make_vector();
    op.upload(x.data(), a.ncols, dx);
    cuda::DeviceGuard guard(0);
    cuda::DeviceBuffer<unsigned char> busy(std::size_t{64} << 20);
    for (int k = 0; k < 200; ++k)  // milliseconds of work ahead of the poison
      KSPMV_CUDA_CHECK(cudaMemsetAsync(busy.data(), k, busy.bytes(), cudaStreamLegacy));
    EXPECT_LE(bench::operator_error(op, dx, dy, ref), reference::tolerance<S>())
        << devices.size() << " devices";
  }
}

// Explicit cuSPARSE pieces (their stand-in vectors in the executor's scratch, shared by the
// pieces of a device, their analysis left queued) and CSR-Vector pieces with long rows.
TYPED_TEST(CudaMultiDeviceTest, PiecesPlannedWithSharedScratchMatchTheReference) {
  using S = TypeParam;
  std::uint64_t seed = 40;
  for (const auto& [name, a] : matrices<S>())
    for (Kernel k : {Kernel::Cusparse, Kernel::CusparseAlg2, Kernel::CsrVector})
      for (Scheme s : {Scheme::TwoNZ, Scheme::LRARC}) {
        cuda::MultiDeviceSpmv<S> md(pointers(a), plan_for(a, s, 2),
                                    {Exchange::AllGather, {0, 0}, k});
        const auto x = random_vector<S>(a.ncols, ++seed);
        const auto y0 = nan_vector<S>(a.nrows);
        auto y = y0, ref = y0;
        reference::spmv(S(1), a, x.data(), S(0), ref.data());
        md.apply(S(1), x.data(), S(0), y.data());
        EXPECT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), y0), reference::tolerance<S>())
            << name << " " << to_string(k) << " " << part::to_string(s);
      }
}

// Streams, events and cuSPARSE handles made with kReuse go back to their device's idle list and
// serve the next one made there; a handle comes back on the legacy default stream.
TEST(CudaIdleHandlesTest, StreamsEventsAndCusparseHandlesAreReused) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  cuda::DeviceGuard guard(0);
  cudaStream_t stream = nullptr;
  {
    const cuda::Stream s(cuda::kReuse);
    stream = s.get();
  }
  {
    const cuda::Stream again(cuda::kReuse), other(cuda::kReuse);
    EXPECT_EQ(again.get(), stream);
    EXPECT_NE(other.get(), stream);
  }
  cudaEvent_t timing = nullptr, plain = nullptr;
  {
    const cuda::Event t(true, cuda::kReuse), p(false, cuda::kReuse);
    timing = t.get(), plain = p.get();
  }
  {
    const cuda::Event p(false, cuda::kReuse), t(true, cuda::kReuse);
    EXPECT_EQ(p.get(), plain);
    EXPECT_EQ(t.get(), timing);
    t.record(stream);
    t.synchronize();
  }
  cusparseHandle_t handle = nullptr;
  {
    const cuda::CusparseHandle h(cuda::kReuse);
    handle = h.get();
    KSPMV_CUDA_CHECK(cusparseSetStream(h.get(), stream));
  }
  const cuda::CusparseHandle h(cuda::kReuse);
  EXPECT_EQ(h.get(), handle);
  cudaStream_t on = stream;
  KSPMV_CUDA_CHECK(cusparseGetStream(h.get(), &on));
  EXPECT_EQ(on, nullptr);
}

// The pieces are planned from row statistics computed on the device: equal to the host's.
TYPED_TEST(CudaMultiDeviceTest, RowProfileOnTheDeviceEqualsTheHostStatistics) {
  using S = TypeParam;
  auto all = matrices<S>();
  all.emplace_back("kron", gen::kronecker<S>(13, 16, 7));
  for (const auto& [name, a] : all) {
    const Ordinal m = a.nrows;
    const Offset lo = a.row_ptr(m / 3), hi = a.row_ptr(m - m / 4);  // a piece, clamped
    std::vector<Offset> local(m + 1);
    for (Ordinal i = 0; i <= m; ++i) local[i] = std::clamp(a.row_ptr(i), lo, hi) - lo;
    cuda::DeviceBuffer<Offset> src(m + 1);
    src.upload(a.row_ptr.data());
    cuda::DeviceBuffer<DeviceOffset> narrow(m + 1);
    cuda::DeviceBuffer<cuda::ProfileSums> sums(1);
    cuda::narrow_and_profile(src.data(), m, lo, hi, narrow.data(), sums.data(), nullptr);
    cuda::ProfileSums h;
    KSPMV_CUDA_CHECK(cudaMemcpy(&h, sums.data(), sizeof h, cudaMemcpyDeviceToHost));
    const cuda::RowProfile p = cuda::to_profile(h, a.ncols);
    std::vector<DeviceOffset> got(m + 1);
    narrow.download(got.data());
    for (Ordinal i = 0; i <= m; ++i) ASSERT_EQ(got[i], local[i]) << name << " row " << i;
    expect_profile_of(p, local.data(), m, a.ncols, name);
    const auto ref_all = analysis::row_stats(local.data(), m, a.ncols);
    if (std::isnan(ref_all.power_law_r))
      EXPECT_TRUE(std::isnan(p.all.power_law_r)) << name;
    else
      EXPECT_NEAR(p.all.power_law_r, ref_all.power_law_r, 1e-9) << name;
    if (m > 0) {  // LRA's longest row of the whole matrix, the first of equals
      cuda::DeviceBuffer<unsigned long long> key(1);
      EXPECT_EQ(cuda::longest_row_on_device(src.data(), m, key.data(), nullptr),
                analysis::row_stats(a.row_ptr.data(), m, a.ncols).longest_row)
          << name;
    }
    for (int k = 0; k < 6; ++k) {
      const Offset t = Offset{128} << k;
      const auto rows = find_long_rows(local.data(), m, t);
      EXPECT_EQ(p.longer_than[k], static_cast<Ordinal>(rows.size())) << name << " > " << t;
      if (rows.empty()) continue;
      const auto plan = cuda::plan_long_rows_on_device(narrow.data(), m, t,
                                                       cuda::long_row_bound(p, t), 1000, nullptr);
      const auto want = plan_long_rows(local.data(), m, rows, 1000);
      EXPECT_EQ(plan.rows, want.rows) << name;
      EXPECT_EQ(plan.first_chunk, want.first_chunk) << name;
      EXPECT_EQ(plan.chunk_begin, want.chunk_begin) << name;
      EXPECT_EQ(plan.chunk_end, want.chunk_end) << name;
    }
  }
}

// Every exchange of every scheme through the Operator, its vectors and its CG: CG converges like
// the host CG (AllGather and Halo and allgather-x keep the vectors on the devices, Merge on the
// first device).
TYPED_TEST(CudaMultiDeviceTest, CgThroughTheOperatorConvergesLikeHostCgWithEveryExchange) {
  using S = TypeParam;
  const double tol = std::is_same_v<S, float> ? 1e-5 : 1e-10;
  const auto a = gen::laplace2d<S>(60, 50);
  const auto b = random_vector<S>(a.nrows, 17);
  Operator<S> op(a);
  std::vector<S> x_host(a.ncols, S(0));
  const CgResult host = cg(op, b.data(), x_host.data(), {tol, 3000});
  ASSERT_TRUE(host.converged);
  for (const auto& devices : device_lists())
    for (const auto& [scheme, exchange] :
         std::vector<std::pair<Scheme, Exchange>>{{Scheme::NZ, Exchange::AllGather},
                                                  {Scheme::LRARC, Exchange::AllGather},
                                                  {Scheme::TwoNZ, Exchange::Halo},
                                                  {Scheme::NZ, Exchange::Halo},
                                                  {Scheme::LRA, Exchange::AllGatherX},
                                                  {Scheme::PCSR, Exchange::Merge}}) {
      Options o;
      o.backend = Backend::Cuda;
      o.devices = devices;
      o.partition = scheme;
      o.exchange = exchange;
      Operator<S> dev(a, o);
      std::vector<S> x(a.ncols, S(0));
      const CgResult res = cg(dev, b.data(), x.data(), {tol, 3000});
      const std::string what = std::string(part::to_string(scheme)) + " " +
                               part::to_string(exchange) + " N=" + std::to_string(devices.size());
      EXPECT_TRUE(res.converged) << what;
      EXPECT_LE(res.relative_residual, 10 * tol) << what;
      EXPECT_NEAR(res.iterations, host.iterations, 0.1 * host.iterations + 3) << what;
      EXPECT_GT(res.ms_per_iteration, 0) << what;
    }
}

// Jacobi-preconditioned CG (Saad 2003, Alg. 9.1) on a badly scaled matrix through the Operator on
// one device and several, with every exchange: z = d * r inside the fused kernels (and so inside
// the iteration a CUDA graph replays where the layout allows it) converges like the host PCG, to
// the host's solution, in far fewer iterations than plain CG on the device.
TYPED_TEST(CudaMultiDeviceTest, JacobiCgThroughTheOperatorMatchesTheHostWithEveryExchange) {
  using S = TypeParam;
  const double tol = std::is_same_v<S, float> ? 1e-4 : 1e-10;
  // Scales over 2 decades in float (A x in float cannot show a smaller residual over 4, as in
  // cg_test.cpp), over 4 in double.
  const auto a = badly_scaled(gen::laplace2d<S>(60, 50), std::is_same_v<S, float> ? 2.0 : 4.0, 23);
  const auto b = random_vector<S>(a.nrows, 29);
  const Jacobi<S> m(a);
  Operator<S> op(a);
  std::vector<S> x_host(a.ncols, S(0));
  const CgResult host = cg(op, b.data(), x_host.data(), {tol, 20000}, &m);
  ASSERT_TRUE(host.converged);
  double xx = 0;
  for (S v : x_host) xx += double(v) * double(v);
  {
    Options o;
    o.backend = Backend::Cuda;
    Operator<S> dev(a, o);
    std::vector<S> x(a.ncols, S(0));
    const CgResult plain = cg(dev, b.data(), x.data(), {tol, 20000});
    EXPECT_LT(5 * host.iterations, plain.iterations);
  }
  for (const auto& devices : device_lists())
    for (const auto& [scheme, exchange] :
         std::vector<std::pair<Scheme, Exchange>>{{Scheme::NZ, Exchange::AllGather},
                                                  {Scheme::TwoNZ, Exchange::Halo},
                                                  {Scheme::LRA, Exchange::AllGatherX},
                                                  {Scheme::PCSR, Exchange::Merge}})
      for (bool graphs : {true, false}) {
        Options o;
        o.backend = Backend::Cuda;
        o.devices = devices;
        o.partition = scheme;
        o.exchange = exchange;
        o.graphs = graphs;
        Operator<S> dev(a, o);
        std::vector<S> x(a.ncols, S(0));
        const CgResult res = cg(dev, b.data(), x.data(), {tol, 20000}, &m);
        const std::string what =
            std::string(part::to_string(scheme)) + " " + part::to_string(exchange) +
            " N=" + std::to_string(devices.size()) + (graphs ? " graphs" : " no graphs");
        EXPECT_TRUE(res.converged) << what;
        EXPECT_LE(true_relative_residual(a, b, x), 10 * tol) << what;
        EXPECT_NEAR(res.iterations, host.iterations, 0.1 * host.iterations + 3) << what;
        double dd = 0;
        for (std::size_t i = 0; i < x.size(); ++i)
          dd += (double(x[i]) - double(x_host[i])) * (double(x[i]) - double(x_host[i]));
        const double x_tol = std::is_same_v<S, float> ? 1e-2 : 1e-6;
        EXPECT_LE(std::sqrt(dd / xx), x_tol) << what;
        const bool replicated = exchange == Exchange::AllGather && devices.size() > 1;
        if (graphs && !replicated) EXPECT_EQ(res.replay, "one CUDA graph an iteration") << what;
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
  EXPECT_THROW(MD(pa, plan_for(a, Scheme::NZ, 1), {Exchange::AllGather, {1000}}), InvalidArgument);
  EXPECT_THROW(MD(pa, plan_for(a, Scheme::PCSR, 2), {Exchange::AllGather, {0, 0}}),
               UnsupportedError);
  EXPECT_THROW(MD(pa, plan_for(a, Scheme::LRARC, 2), {Exchange::Halo, {0, 0}}), UnsupportedError);
  EXPECT_THROW(
      MD(pa, plan_for(a, Scheme::NZ, 2), {Exchange::AllGather, {0, 0}, Kernel::FullOverlap}),
      UnsupportedError);
  MD md(pa, plan_for(a, Scheme::NZ, 2), {Exchange::Merge, {0, 0}});
  EXPECT_THROW(md.cg_layout(nullptr), UnsupportedError);  // y ends on device 0 alone
  MD other(pa, plan_for(a, Scheme::NZ, 3), {Exchange::Halo, {0, 0, 0}});
  const auto v = other.make_vector(nullptr);
  std::vector<double> y(100);
  EXPECT_THROW(md.download(v, 100, y.data()), InvalidArgument);  // three parts, not two
}

#else

TEST(CudaMultiDeviceTest, SkippedWithoutCuda) {
  GTEST_SKIP() << "built without CUDA";
}

#endif

}  // namespace
}  // namespace kspmv::test

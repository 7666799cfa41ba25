// Matrices beyond 32-bit offsets and beyond the device's memory, on the GPU: every CUDA kernel with
// 64-bit device offsets (forced on small matrices, as a matrix of 2^31 non-zeros gets them),
// CSR-Full-Overlap's ring under device-memory limits (many ring turns, applies in a row, value
// refreshes, arrays pinned by two kernels or already pinned), the Operator's residency choice and
// its errors, and a banded matrix of just over 2^31 non-zeros checked on sampled rows (CudaHuge:
// skipped with the sizes when the GPU or the host lacks the memory). Skipped without the CUDA
// backend or a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "batched_test_matrices.hpp"
#include "gpu_test.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/registry.hpp"
#include "refresh_test_cases.hpp"
#include "seg_test_cases.hpp"

#ifdef KSPMV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/full_overlap.hpp"
#include "backends/cuda/seg_spmv.hpp"
#endif

namespace kspmv::test {
namespace {

template <class S>
class CudaWideOffsets : public GpuTest {};
template <class S>
class CudaRing : public GpuTest {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaWideOffsets, Scalars);
TYPED_TEST_SUITE(CudaRing, Scalars);
using CudaResidency = GpuTest;
using CudaHuge = GpuTest;

#ifdef KSPMV_HAVE_CUDA

// y = alpha*A*x + beta*y on the GPU by the kernel `make` builds for the matrix given (host
// vectors in and out; complete on return).
template <class S, class Make>
seg::Runner<S> runner(const Make& make) {
  return [make](S alpha, const CsrMatrix<S>& a, const S* x, S beta, S* y) {
    run_on_device(*make(a), a, alpha, x, beta, y);
  };
}

template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> wide_matrices() {
  auto z = zoo<S>();
  z.emplace_back("mixed_long_rows", mixed_long_rows<S>(3000, 4000, 5));
  z.emplace_back("long_row_1e5_among_short", seg::long_row_among_short<S>());
  z.emplace_back("laplace2d_64x48", gen::laplace2d<S>(64, 48));
  return z;
}

// Every kernel of the registry with 64-bit offsets: those on the CSR from a DeviceCsr uploaded
// wide, seg and seg-r with 64-bit segment pointers; HBP, whose element offsets are 32-bit,
// refuses such a matrix. (Full-overlap's slots index their big batch in 32 bits whatever the
// matrix: CudaRing.)
TYPED_TEST(CudaWideOffsets, EveryKernelMatchesReference) {
  using S = TypeParam;
  for (const auto& row : cuda::kernel_table<S>()) {
    const Kernel kernel = row.info.kernel;
    if (kernel == Kernel::FullOverlap) continue;
    if (kernel == Kernel::Hbp) {
      const auto a = mixed_long_rows<S>(300, 400, 3);
      const auto d =
          std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(pointers(a), true));
      EXPECT_THROW(row.make(d, pointers(a)), UnsupportedError);
      continue;
    }
    for (const auto& [name, a] : wide_matrices<S>()) {
      SCOPED_TRACE(std::string(to_string(kernel)) + " " + name);
      seg::expect_all_cases_match_reference<S>(
          runner<S>([&row, kernel](const CsrMatrix<S>& m) {
            const CsrPointers<S> host = pointers(m);
            if (!row.uses_device_csr)
              return cuda::make_seg<S>(host, kernel == Kernel::SegR, 0, true);
            auto d =
                std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(host, true));
            EXPECT_TRUE(d->wide());
            return row.make(d, host);
          }),
          a);
    }
  }
}

// The ring under a device-memory limit: too small a limit is refused with the least it needs;
// at that least (and at 4 times it) the kernel holds no more, and runs every case, three applies
// in a row, then after a refresh from the host and one from the device.
TYPED_TEST(CudaRing, LimitedRingMatchesReferenceThroughRefreshes) {
  using S = TypeParam;
  for (const auto& [name, a] : batched_matrices<S>()) {
    for (const auto& [pname, p] : batch_param_sets()) {
      SCOPED_TRACE(name + " / " + pname);
      std::size_t least = 0;
      try {
        cuda::make_full_overlap<S>(pointers(a), p, {1024, 3});
        ADD_FAILURE() << "a ring in 1 KB";
      } catch (const MemoryError& e) {
        least = e.requested_bytes();
        EXPECT_EQ(e.available_bytes(), 1024u);
        EXPECT_NE(std::string(e.what()).find("ring of 3 device buffers"), std::string::npos)
            << e.what();
      }
      for (const std::size_t limit : {least, 4 * least}) {
        SCOPED_TRACE("limit " + std::to_string(limit));
        const auto k = cuda::make_full_overlap<S>(pointers(a), p, {limit, 3});
        EXPECT_LE(k->extra_device_bytes(), limit);
        std::uint64_t seed = seg::fresh_seed();
        SCOPED_TRACE("seed " + std::to_string(seed));
        cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows), dv(a.nnz());
        cuda::Stream stream;
        const refresh::Apply<S> apply = [&](S alpha, const S* x, S beta, S* y) {
          dx.upload(x);
          dy.upload(y);
          k->run(alpha, dx.data(), beta, dy.data(), stream.get());
          stream.synchronize();
          dy.download(y);
        };
        for (int run = 0; run < 3; ++run)
          refresh::expect_matches(apply, a, ++seed, "apply " + std::to_string(run));
        const auto v = random_vector<S>(a.nnz(), ++seed);
        k->update_values(v.data(), stream.get());
        refresh::expect_matches(apply, refresh::with_values(a, v), ++seed, "host refresh");
        const auto w = random_vector<S>(a.nnz(), ++seed);
        dv.upload(w.data());
        k->update_values(dv.data(), stream.get());
        refresh::expect_matches(apply, refresh::with_values(a, w), ++seed, "device refresh");
      }
    }
  }
}

// Two kernels pin the same arrays: the registration is shared, the last one unpins them.
// Arrays that are page-locked already are used as they are and stay so.
TYPED_TEST(CudaRing, PinsInPlaceSharedAndAlreadyPinnedArrays) {
  using S = TypeParam;
  const auto a = mixed_long_rows<S>(2000, 3000, 9);
  const auto type_of = [](const void* p) {
    cudaPointerAttributes at{};
    KSPMV_CUDA_CHECK(cudaPointerGetAttributes(&at, p));
    return at.type;
  };
  // The kernel was built on `m`; the alpha == 0 cases pass a NaN copy, which it must not read.
  const auto check = [&](cuda::DeviceSpmv<S>& k, const CsrMatrix<S>& m) {
    seg::expect_all_cases_match_reference<S>(
        [&](S alpha, const CsrMatrix<S>& mm, const S* x, S beta, S* y) {
          run_on_device(k, mm, alpha, x, beta, y);
        },
        m);
  };
  {
    auto first = cuda::make_full_overlap<S>(pointers(a), {}, {0, 2});
    EXPECT_EQ(type_of(a.values.data()), cudaMemoryTypeHost);
    auto second = cuda::make_full_overlap<S>(pointers(a), {}, {0, 4});
    first.reset();
    EXPECT_EQ(type_of(a.values.data()), cudaMemoryTypeHost) << "unpinned under a holder";
    check(*second, a);
  }
  EXPECT_EQ(type_of(a.col_idx.data()), cudaMemoryTypeUnregistered);
  EXPECT_EQ(type_of(a.values.data()), cudaMemoryTypeUnregistered);

  cuda::PinnedBuffer<Ordinal> col(a.nnz());
  cuda::PinnedBuffer<S> val(a.nnz());
  std::copy(a.col_idx.data(), a.col_idx.data() + a.nnz(), col.data());
  std::copy(a.values.data(), a.values.data() + a.nnz(), val.data());
  {
    auto k =
        cuda::make_full_overlap<S>({a.row_ptr.data(), col.data(), val.data(), a.nrows, a.ncols});
    cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
    const auto x = random_vector<S>(a.ncols, 3);
    std::vector<S> y(a.nrows), ref(a.nrows);
    reference::spmv(S(1), a, x.data(), S(0), ref.data());
    dx.upload(x.data());
    k->run(S(1), dx.data(), S(0), dy.data(), nullptr);
    KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
    dy.download(y.data());
    EXPECT_LE(reference::rel_l2_error(y.data(), ref.data(), y.size()), reference::tolerance<S>());
  }
  EXPECT_EQ(type_of(val.data()), cudaMemoryTypeHost);
}

TYPED_TEST(CudaRing, RejectsFewerThanTwoSlots) {
  using S = TypeParam;
  const auto a = random_matrix<S>(50, 50, 3, 1);
  EXPECT_THROW(cuda::make_full_overlap<S>(pointers(a), {}, {0, 1}), InvalidArgument);
}

Options cuda_options(Residency residency, std::size_t limit, Kernel kernel = Kernel::Auto) {
  Options o;
  o.backend = Backend::Cuda;
  o.kernel = kernel;
  o.residency = residency;
  o.device_memory_limit = limit;
  return o;
}

// y = A x and y = A^T x through the Operator on host Views, checked against the oracle.
void expect_operator_matches(Operator<double>& op, const CsrMatrix<double>& a, Mode mode,
                             std::uint64_t seed) {
  const CsrMatrix<double> m = mode == Mode::Transpose ? transpose(a) : a;
  const auto x = random_vector<double>(m.ncols, seed);
  std::vector<double> ref(m.nrows);
  reference::spmv(1.0, m, x.data(), 0.0, ref.data());
  HostView<double> xv("x", m.ncols), yv("y", m.nrows);
  std::copy(x.begin(), x.end(), xv.data());
  Kokkos::deep_copy(yv, std::nan(""));
  op.apply(1.0, xv, 0.0, yv, mode);
  EXPECT_LE(reference::rel_l2_error(yv.data(), ref.data(), ref.size()), 1e-12);
}

// Auto is resident when the matrix fits the limit and streamed when it does not; the streamed
// operator applies, refreshes, transposes and outlives the caller's matrix.
TEST_F(CudaResidency, AutoStreamsWhatDoesNotFitTheLimit) {
  const Ordinal side = 300;  // 90,000 rows, 448,800 non-zeros: 5.7 MB of CSR, 1.4 MB of vectors
  std::unique_ptr<Operator<double>> streamed;
  {
    const auto a = gen::laplace2d<double>(side, side);
    Operator<double> roomy(a, cuda_options(Residency::Auto, std::size_t(1) << 40));
    EXPECT_EQ(roomy.residency(), Residency::Resident);
    expect_operator_matches(roomy, a, Mode::NoTranspose, 1);
    Operator<double> by_default(a, cuda_options(Residency::Auto, 0));
    EXPECT_EQ(by_default.residency(), Residency::Resident);

    streamed = std::make_unique<Operator<double>>(a, cuda_options(Residency::Auto, 3'000'000));
    EXPECT_EQ(streamed->residency(), Residency::Streamed);
    EXPECT_EQ(streamed->kernel(), Kernel::FullOverlap);
    for (int run = 0; run < 3; ++run) expect_operator_matches(*streamed, a, Mode::NoTranspose, run);
    expect_operator_matches(*streamed, a, Mode::Transpose, 7);
  }
  // The caller's matrix is gone: the operator keeps the arrays it streams from alive.
  const auto a = gen::laplace2d<double>(side, side);
  expect_operator_matches(*streamed, a, Mode::NoTranspose, 8);
  const auto v = random_vector<double>(a.nnz(), 9);
  HostView<double> values("values", a.nnz());
  std::copy(v.begin(), v.end(), values.data());
  streamed->update_values(values);
  expect_operator_matches(*streamed, refresh::with_values(a, v), Mode::NoTranspose, 10);
}

// What cannot fit is refused with the sizes: resident over the limit, a resident kernel under
// Auto, and a limit below the vectors (neither way fits).
TEST_F(CudaResidency, RefusesWhatFitsNeitherWayWithTheSizes) {
  const auto a = gen::laplace2d<double>(300, 300);
  const auto refused = [&](const Options& o, const char* says) {
    try {
      Operator<double> op(a, o);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const MemoryError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("MiB available"), std::string::npos) << what;
      EXPECT_NE(what.find(says), std::string::npos) << what;
    }
  };
  refused(cuda_options(Residency::Resident, 3'000'000), "GB allowed");
  refused(cuda_options(Residency::Auto, 3'000'000, Kernel::CsrVector), "keeps it resident");
  refused(cuda_options(Residency::Auto, 1'000'000), "vectors alone");
  refused(cuda_options(Residency::Streamed, 1'450'000), "ring of 3 device buffers");
  refused(cuda_options(Residency::Auto, 1'450'000), "fits neither resident");
  Operator<double> streamed(a, cuda_options(Residency::Streamed, 0));
  EXPECT_EQ(streamed.residency(), Residency::Streamed);
  EXPECT_THROW(Operator<double>(a, cuda_options(Residency::Resident, 0, Kernel::FullOverlap)),
               UnsupportedError);
}

// Just over 2^31 non-zeros (a band of 129 per row, float: 17.2 GB), resident with 64-bit offsets
// for every CUDA kernel of the registry (HBP refuses it) and through the Operator (resident and
// streamed under a limit), y NaN-poisoned first: every row written, sampled rows against the
// oracle.
TEST_F(CudaHuge, BandedPast2To31NonZerosOnSampledRows) {
  using S = float;
  const Ordinal n = 16'650'000, bw = 64;
  const double nnz = double(n) * (2 * bw + 1) - double(bw) * (bw + 1);
  ASSERT_GT(nnz, 2147483647.0);
  // Host: the matrix and the vectors; device: the CSR, and beside it cuSPARSE's 64-bit copy of
  // the columns where it wants one (the most any kernel takes).
  const double host_need = nnz * (sizeof(S) + 4) + n * 48.0;
  const double device_need = nnz * (sizeof(S) + 4 + 8) + n * 40.0;
  std::size_t free_bytes = 0, total_bytes = 0;
  KSPMV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (double(available_memory()) < host_need || double(free_bytes) < device_need)
    GTEST_SKIP() << "needs " << host_need / 1e9 << " GB of host memory ("
                 << available_memory() / 1e9 << " available) and " << device_need / 1e9
                 << " GB of device memory (" << free_bytes / 1e9 << " free)";
  const CsrMatrix<S> a = gen::banded<S>(n, bw);
  ASSERT_EQ(double(a.nnz()), nnz);
  const CsrPointers<S> host = pointers(a);
  const auto x = random_vector<S>(a.ncols, 2031);
  std::vector<Ordinal> rows = {0, 1, bw - 1, bw, bw + 1, n / 2, n - bw - 1, n - 2, n - 1};
  std::mt19937_64 gen(31);
  for (int i = 0; i < 2000; ++i) rows.push_back(static_cast<Ordinal>(gen() % n));
  std::vector<long double> ref(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (Offset k = a.row_ptr(rows[i]); k < a.row_ptr(rows[i] + 1); ++k)
      ref[i] += static_cast<long double>(a.values(k)) * x[a.col_idx(k)];
  // y (NaN before) must be finite everywhere and match the oracle on the sampled rows.
  const auto expect_result = [&](const std::vector<S>& y, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(std::count_if(y.begin(), y.end(), [](S v) { return !std::isfinite(v); }), 0);
    std::vector<S> got(rows.size()), want(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) got[i] = y[rows[i]], want[i] = S(ref[i]);
    EXPECT_LE(reference::rel_l2_error(got.data(), want.data(), got.size()),
              reference::tolerance<S>());
  };
  std::vector<S> y(a.nrows);
  {
    cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
    dx.upload(x.data());
    std::shared_ptr<const cuda::DeviceCsr<S>> d;
    for (const auto& row : cuda::kernel_table<S>()) {
      if (row.uses_device_csr && !d) {
        d = std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(host));
        ASSERT_TRUE(d->wide());
      }
      if (row.info.kernel == Kernel::Hbp) {  // 32-bit element offsets: refused
        EXPECT_THROW(row.make(d, host), UnsupportedError);
        continue;
      }
      std::unique_ptr<cuda::DeviceSpmv<S>> k;
      try {
        k = row.make(row.uses_device_csr ? d : nullptr, host);
      } catch (const UnsupportedError& e) {  // cuSPARSE may not run it: said, not hidden
        const bool vendor =
            row.info.kernel == Kernel::Cusparse || row.info.kernel == Kernel::CusparseAlg2;
        if (!vendor) throw;
        std::cout << "[     NOTE ] " << e.what() << "\n";
        RecordProperty(to_string(row.info.kernel), e.what());
        continue;
      }
      KSPMV_CUDA_CHECK(cudaMemset(dy.data(), 0xff, dy.bytes()));
      k->run(S(1), dx.data(), S(0), dy.data(), nullptr);
      KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
      dy.download(y.data());
      expect_result(y, to_string(row.info.kernel));
    }
  }
  HostView<S> xv("x", a.ncols), yv("y", a.nrows);
  std::copy(x.begin(), x.end(), xv.data());
  for (const auto& [residency, limit] :
       {std::pair{Residency::Auto, std::size_t(0)}, std::pair{Residency::Auto, std::size_t(8e9)}}) {
    Options o;
    o.backend = Backend::Cuda;
    o.residency = residency;
    o.device_memory_limit = limit;
    Operator<S> op(a, o);
    EXPECT_EQ(op.residency(), limit == 0 ? Residency::Resident : Residency::Streamed);
    Kokkos::deep_copy(yv, std::nanf(""));
    op.apply(S(1), xv, S(0), yv);
    expect_result(
        std::vector<S>(yv.data(), yv.data() + a.nrows),
        std::string("Operator, ") + to_string(op.residency()) + ", " + to_string(op.kernel()));
  }
}

#else

TYPED_TEST(CudaWideOffsets, EveryKernelMatchesReference) {}
TEST_F(CudaHuge, BandedPast2To31NonZerosOnSampledRows) {}

#endif

}  // namespace
}  // namespace kspmv::test

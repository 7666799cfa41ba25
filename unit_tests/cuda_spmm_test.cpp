// Multi-vector SpMV on the GPU (csr_spmm and the planned CsrSpmm, spmm.hpp) against the
// long-double oracle column by column, and the device transpose (transpose.hpp) against the host
// transpose array by array and through SpMV; skipped without a GPU or the CUDA backend (the
// argument checks run without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu_test.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "seg_test_cases.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

#ifdef KSPMV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/long_rows.hpp"
#include "backends/cuda/memory.hpp"
#include "backends/cuda/spmm.hpp"
#include "backends/cuda/transpose.hpp"
#endif

namespace kspmv::test {
namespace {

// Every test of these suites runs on the GPU: skipped without the CUDA backend or a device.
using CudaSpmmTest = GpuTest;
template <class S>
class CudaSpmm : public CudaSpmmTest {};
template <class S>
class CudaTranspose : public CudaSpmmTest {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaSpmm, Scalars);
TYPED_TEST_SUITE(CudaTranspose, Scalars);

#ifdef KSPMV_HAVE_CUDA

// The zoo, generated families (a 5-point stencil, many empty rows, an R-MAT graph, planted long
// rows) and a row of 10^5 entries among short ones.
template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> spmm_matrices() {
  auto z = zoo<S>();
  z.emplace_back("laplace2d_64x48", gen::laplace2d<S>(64, 48));
  z.emplace_back("empty_rows_1500x900", random_matrix<S>(1500, 900, 1, 11));  // ~1/3 empty
  z.emplace_back("kronecker_10", gen::kronecker<S>(10, 8, 3));
  z.emplace_back("long_rows_3000",
                 gen::with_long_rows(gen::uniform_random<S>(2000, 3000, 4, 5), 3, 3000, 6));
  z.emplace_back("long_row_1e5_among_short", seg::long_row_among_short<S>());
  return z;
}

// Y = alpha*A*X + beta*Y for the matrix given (host), on device X and Y with leading dimensions
// ldx and ldy; complete on return.
template <class S>
using SpmmRunner =
    std::function<void(const CsrMatrix<S>&, S, const S*, std::size_t, S, S*, std::size_t, int)>;

constexpr std::size_t kPadX = 3, kPadY = 2;  // rows of padding between the columns

// Column c (its first `len` entries) of a column-major array with leading dimension ld.
template <class S>
std::vector<S> column(const std::vector<S>& v, std::size_t ld, int c, Ordinal len) {
  return std::vector<S>(v.begin() + c * ld, v.begin() + c * ld + len);
}

// Runs `run` on `a` with k vectors for the cases every kernel test covers: beta 0 on a
// NaN-poisoned Y, beta != 0 (and 1) on a random Y, and alpha 0 on a matrix whose values are NaN
// and an X that is NaN (neither may be read). X's padding rows are NaN (reading them poisons the
// result); Y's padding rows hold a sentinel that must survive. Fresh random X and Y per call.
template <class S>
void expect_spmm_matches_reference(const SpmmRunner<S>& run, const CsrMatrix<S>& a, int k) {
  const std::uint64_t seed = seg::fresh_seed();
  SCOPED_TRACE("k " + std::to_string(k) + ", x seed " + std::to_string(seed));
  const Ordinal m = a.nrows, n = a.ncols;
  const std::size_t ldx = n + kPadX, ldy = m + kPadY;
  const S nan = std::numeric_limits<S>::quiet_NaN(), sentinel = S(12345);
  std::vector<S> x(ldx * k, nan);
  for (int c = 0; c < k; ++c) {
    const auto col = random_vector<S>(n, seed + 2 * c);
    std::copy(col.begin(), col.end(), x.begin() + c * ldx);
  }
  const std::vector<S> nan_x(ldx * k, nan);
  CsrMatrix<S> poisoned = clone(a);
  Kokkos::deep_copy(poisoned.values, nan);
  const std::vector<std::tuple<const CsrMatrix<S>*, S, S, bool>> cases = {
      {&a, S(1.5), S(0), true},       {&a, S(-0.75), S(0.5), false}, {&a, S(2), S(1), false},
      {&poisoned, S(0), S(2), false}, {&poisoned, S(0), S(0), true}, {&poisoned, S(0), S(1), false},
  };
  cuda::DeviceBuffer<S> dx(ldx * k), dy(ldy * k);
  for (const auto& [matrix, alpha, beta, nan_y] : cases) {
    SCOPED_TRACE("alpha " + std::to_string(alpha) + " beta " + std::to_string(beta));
    std::vector<S> y0(ldy * k, sentinel);
    for (int c = 0; c < k; ++c) {
      const auto col = nan_y ? nan_vector<S>(m) : random_vector<S>(m, seed + 2 * c + 1);
      std::copy(col.begin(), col.end(), y0.begin() + c * ldy);
    }
    dx.upload(alpha == S(0) ? nan_x.data() : x.data());
    dy.upload(y0.data());
    run(*matrix, alpha, dx.data(), ldx, beta, dy.data(), ldy, k);
    std::vector<S> y(ldy * k);
    dy.download(y.data());
    for (int c = 0; c < k; ++c) {
      const std::vector<S> xc = column(x, ldx, c, n), y0c = column(y0, ldy, c, m),
                           yc = column(y, ldy, c, m);
      std::vector<S> ref = y0c;
      reference::spmv(alpha, *matrix, xc.data(), beta, ref.data());
      EXPECT_LE(spmv_error(yc, ref, alpha, *matrix, xc.data(), beta, y0c),
                reference::tolerance<S>())
          << "column " << c;
      for (std::size_t i = m; i < ldy; ++i)
        ASSERT_EQ(y[i + c * ldy], sentinel) << "padding row " << i << " of column " << c;
    }
  }
}

template <class S>
std::shared_ptr<const cuda::DeviceCsr<S>> upload(const CsrMatrix<S>& a) {
  return std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(pointers(a)));
}

// CsrSpmm planned with `config` on the matrix given, run on the default stream.
template <class S>
SpmmRunner<S> planned(cuda::CsrVectorConfig config = {}) {
  return [config](const CsrMatrix<S>& a, S alpha, const S* x, std::size_t ldx, S beta, S* y,
                  std::size_t ldy, int k) {
    cuda::CsrSpmm<S> spmm(upload(a), a.row_ptr.data(), config);
    spmm.run(alpha, x, ldx, beta, y, ldy, k, nullptr);
    KSPMV_CUDA_CHECK(cudaDeviceSynchronize());  // before the matrix and the plan are freed
  };
}

TYPED_TEST(CudaSpmm, PlannedMatchesReferenceForEveryKUpTo10) {
  using S = TypeParam;
  for (const auto& [name, a] : spmm_matrices<S>()) {
    SCOPED_TRACE(name);
    for (int k = 1; k <= 10; ++k) expect_spmm_matches_reference<S>(planned<S>(), a, k);
  }
}

TYPED_TEST(CudaSpmm, FreeFunctionMatchesReferenceForEveryLaneCount) {
  using S = TypeParam;
  std::vector<std::pair<std::string, CsrMatrix<S>>> matrices;
  for (auto& [name, a] : spmm_matrices<S>())
    if (name == "laplace2d_64x48" || name == "empty_rows_1500x900" || name == "kronecker_10" ||
        name == "one_dense_row")
      matrices.emplace_back(name, a);
  ASSERT_EQ(matrices.size(), 4u);
  for (const auto& [name, a] : matrices) {
    for (int lanes : {1, 2, 4, 8, 16, 32}) {
      for (const bool wide : {false, true}) {  // 32- and 64-bit row pointers
        SCOPED_TRACE(name + ", " + std::to_string(lanes) + " lanes" + (wide ? ", wide" : ""));
        for (int k : {1, 3, 8, 9}) {
          expect_spmm_matches_reference<S>(
              [lanes, wide](const CsrMatrix<S>& m, S alpha, const S* x, std::size_t ldx, S beta,
                            S* y, std::size_t ldy, int kk) {
                const auto d = cuda::DeviceCsr<S>::upload(pointers(m), wide);
                d.with_view([&](const auto& v) {
                  cuda::csr_spmm(v, alpha, x, ldx, beta, y, ldy, kk, nullptr, lanes);
                });
                KSPMV_CUDA_CHECK(cudaDeviceSynchronize());  // before the matrix is freed
              },
              a, k);
        }
      }
    }
  }
}

TYPED_TEST(CudaSpmm, LongRowPathServesEveryPass) {
  using S = TypeParam;
  const auto planted = gen::with_long_rows(gen::uniform_random<S>(2000, 3000, 4, 5), 3, 3000, 6);
  const auto long_row = seg::long_row_among_short<S>();
  const auto graph = gen::kronecker<S>(10, 8, 3);
  // The automatic plans: 8 lanes and a threshold of 1024 put the planted rows of 3000 and 1500
  // entries on the long-row path (not the one of 750); 4 lanes, threshold 512, the 1e5 row.
  const cuda::CsrSpmm<S> planted_plan(upload(planted), planted.row_ptr.data());
  EXPECT_EQ(planted_plan.lanes(), 8);
  EXPECT_EQ(planted_plan.long_rows(), 2);
  const cuda::CsrSpmm<S> row_plan(upload(long_row), long_row.row_ptr.data());
  EXPECT_EQ(row_plan.long_rows(), 1);
  // 2 lanes and a threshold of 8 split the R-MAT graph's rows between both paths.
  const cuda::CsrVectorConfig split{2, 8};
  const cuda::CsrSpmm<S> graph_plan(upload(graph), graph.row_ptr.data(), split);
  EXPECT_EQ(graph_plan.lanes(), 2);
  EXPECT_GT(graph_plan.long_rows(), 10);
  EXPECT_LT(graph_plan.long_rows(), graph.nrows / 2);
  for (int k : {1, 5, 8, 9, 10, 17}) {  // 17: passes of 8, 8 and 1
    expect_spmm_matches_reference<S>(planned<S>(), planted, k);
    expect_spmm_matches_reference<S>(planned<S>(split), graph, k);
    expect_spmm_matches_reference<S>(planned<S>({1, 0}), long_row, k);
  }
}

// CSR-Vector runs its long rows as chunks of its own launch, each row finished by the warp of its
// last chunk on a count that warp resets (long_rows.cuh): apply after apply on one kernel (fresh
// inputs, y poisoned or not) matches the reference, and the same inputs give the same bits (the
// chunk sums added in chunk order). The R-MAT graph with a threshold of 8 has hundreds of long
// rows, most of one chunk; the row of 1e5 entries has 98.
TYPED_TEST(CudaSpmm, CsrVectorFinishesLongRowsInItsLaunchApplyAfterApply) {
  using S = TypeParam;
  const auto graph = gen::kronecker<S>(10, 8, 3);
  const auto long_row = seg::long_row_among_short<S>();
  const std::vector<std::pair<const CsrMatrix<S>*, cuda::CsrVectorConfig>> runs = {{&graph, {2, 8}},
                                                                                   {&long_row, {}}};
  for (const auto& [a, config] : runs) {
    SCOPED_TRACE(std::to_string(a->nrows) + " rows");
    const auto kernel = cuda::make_csr_vector<S>(upload(*a), pointers(*a), config);
    for (int round = 0; round < 3; ++round)
      seg::expect_all_cases_match_reference<S>(
          [&](S alpha, const CsrMatrix<S>& m, const S* x, S beta, S* y) {
            run_on_device(*kernel, m, alpha, x, beta, y);
          },
          *a);
    const std::uint64_t seed = seg::fresh_seed();
    const auto x = random_vector<S>(a->ncols, seed), y0 = random_vector<S>(a->nrows, seed + 1);
    auto first = y0, second = y0;
    run_on_device(*kernel, *a, S(0.5), x.data(), S(-1), first.data());
    run_on_device(*kernel, *a, S(0.5), x.data(), S(-1), second.data());
    EXPECT_EQ(first, second) << "x seed " << seed;
  }
}

// The long-row path alone writes exactly its listed rows, applied twice: in one launch, and in
// two where a listed row is empty (it has no chunk to finish it: y = beta * y there).
TYPED_TEST(CudaSpmm, LongRowPathWritesItsRowsOnlyInOneLaunchOrTwo) {
  using S = TypeParam;
  const auto a = seg::long_row_among_short<S>();
  const auto d = upload(a);
  Ordinal empty = 0;
  while (a.row_ptr(empty + 1) > a.row_ptr(empty)) ++empty;
  const std::vector<Ordinal> long_rows = find_long_rows(a.row_ptr.data(), a.nrows, 3);
  std::vector<Ordinal> with_empty = long_rows;
  with_empty.insert(std::lower_bound(with_empty.begin(), with_empty.end(), empty), empty);
  for (const auto& rows : {long_rows, with_empty}) {
    const cuda::LongRowPath<S> path(a.row_ptr.data(), a.nrows, rows, 64);
    EXPECT_EQ(path.one_launch(), rows == long_rows);
    for (int round = 0; round < 2; ++round) {
      const std::uint64_t seed = seg::fresh_seed();
      SCOPED_TRACE("x seed " + std::to_string(seed));
      const auto x = random_vector<S>(a.ncols, seed), y0 = random_vector<S>(a.nrows, seed + 1);
      cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
      dx.upload(x.data());
      dy.upload(y0.data());
      path.run(d->col.data(), d->val.data(), S(1.5), dx.data(), S(0.5), dy.data(), nullptr);
      std::vector<S> y(a.nrows), ref = y0;
      dy.download(y.data());
      reference::spmv(S(1.5), a, x.data(), S(0.5), ref.data());
      for (Ordinal i = 0; i < a.nrows; ++i) {
        if (std::binary_search(rows.begin(), rows.end(), i)) continue;
        ASSERT_EQ(y[i], y0[i]) << "unlisted row " << i;
        y[i] = ref[i];  // so that the error below is the listed rows'
      }
      EXPECT_LE(spmv_error(y, ref, S(1.5), a, x.data(), S(0.5), y0), reference::tolerance<S>());
    }
  }
}

TYPED_TEST(CudaSpmm, PlannedOnTheDeviceRowPointerEqualsHostPlan) {
  using S = TypeParam;
  const auto a = gen::with_long_rows(gen::uniform_random<S>(2000, 3000, 4, 5), 3, 3000, 6);
  const auto d = upload(a);
  const cuda::CsrSpmm<S> host_plan(d, a.row_ptr.data());
  const cuda::CsrSpmm<S> device_plan(d);
  EXPECT_EQ(device_plan.lanes(), host_plan.lanes());
  EXPECT_EQ(device_plan.long_row_threshold(), host_plan.long_row_threshold());
  EXPECT_EQ(device_plan.long_rows(), host_plan.long_rows());
  EXPECT_EQ(device_plan.extra_device_bytes(), host_plan.extra_device_bytes());
}

// Capturing run() in a CUDA graph fails if it allocates, synchronises or uses another stream;
// the replayed graph (two passes and the long-row path) must give the reference result.
TYPED_TEST(CudaSpmm, RunIsCapturedInACudaGraphAndReplayed) {
  using S = TypeParam;
  const auto a = gen::with_long_rows(gen::uniform_random<S>(2000, 3000, 4, 5), 3, 3000, 6);
  cuda::CsrSpmm<S> spmm(upload(a), a.row_ptr.data());
  ASSERT_GT(spmm.long_rows(), 0);
  const int k = 10;
  const std::size_t ldx = a.ncols, ldy = a.nrows;
  std::vector<S> x(ldx * k);
  for (int c = 0; c < k; ++c) {
    const auto col = random_vector<S>(a.ncols, seg::fresh_seed());
    std::copy(col.begin(), col.end(), x.begin() + c * ldx);
  }
  cuda::DeviceBuffer<S> dx(ldx * k), dy(ldy * k);
  dx.upload(x.data());
  dy.upload(nan_vector<S>(ldy * k).data());
  const S alpha = S(0.5);
  cuda::Stream stream;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  KSPMV_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
  spmm.run(alpha, dx.data(), ldx, S(0), dy.data(), ldy, k, stream.get());
  KSPMV_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
  KSPMV_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {  // beta == 0: every replay gives the same Y
    KSPMV_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
  }
  stream.synchronize();
  KSPMV_CUDA_CHECK(cudaGraphExecDestroy(exec));
  KSPMV_CUDA_CHECK(cudaGraphDestroy(graph));
  std::vector<S> y(ldy * k);
  dy.download(y.data());
  for (int c = 0; c < k; ++c) {
    const std::vector<S> xc(x.begin() + c * ldx, x.begin() + (c + 1) * ldx);
    const std::vector<S> yc(y.begin() + c * ldy, y.begin() + (c + 1) * ldy);
    auto ref = nan_vector<S>(ldy);
    reference::spmv(alpha, a, xc.data(), S(0), ref.data());
    EXPECT_LE(spmv_error(yc, ref, alpha, a, xc.data(), S(0), {}), reference::tolerance<S>())
        << "column " << c;
  }
}

// ---- transpose -----------------------------------------------------------------------------

TYPED_TEST(CudaTranspose, EqualsHostTransposeArrayByArray) {
  using S = TypeParam;
  for (const auto& [name, a] : spmm_matrices<S>()) {
    SCOPED_TRACE(name);
    const CsrMatrix<S> want = transpose(a);
    const cuda::DeviceCsr<S> got = cuda::transpose(*upload(a));
    ASSERT_EQ(got.m, want.nrows);
    ASSERT_EQ(got.n, want.ncols);
    ASSERT_EQ(got.nnz, want.nnz());
    std::vector<DeviceOffset> row_ptr(std::size_t(got.m) + 1);
    std::vector<Ordinal> col(got.nnz);
    std::vector<S> val(got.nnz);
    got.row_ptr.download(row_ptr.data(), row_ptr.size());
    got.col.download(col.data(), col.size());
    got.val.download(val.data(), val.size());
    for (Ordinal i = 0; i <= got.m; ++i) ASSERT_EQ(row_ptr[i], want.row_ptr(i)) << "row " << i;
    for (DeviceOffset e = 0; e < got.nnz; ++e) {
      ASSERT_EQ(col[e], want.col_idx(e)) << "entry " << e;
      ASSERT_EQ(val[e], want.values(e)) << "entry " << e;
    }
  }
}

// SpMV and SpMM on the device transpose (planned from its device row pointer) match the oracle
// on the host transpose.
TYPED_TEST(CudaTranspose, SpmvAndSpmmOnTheDeviceTransposeMatchReference) {
  using S = TypeParam;
  // `at` is the host transpose of the matrix uploaded; the kernel runs on its device transpose.
  const auto on_device_transpose = [](const CsrMatrix<S>& at) {
    return std::make_shared<const cuda::DeviceCsr<S>>(cuda::transpose(*upload(transpose(at))));
  };
  for (const auto& [name, a] : spmm_matrices<S>()) {
    SCOPED_TRACE(name);
    const CsrMatrix<S> at = transpose(a);
    seg::expect_all_cases_match_reference<S>(
        [&](S alpha, const CsrMatrix<S>& m, const S* x, S beta, S* y) {
          const auto d = on_device_transpose(m);
          const auto kernel = cuda::make_csr_vector<S>(d, pointers(m));
          cuda::DeviceBuffer<S> dx(m.ncols), dy(m.nrows);
          dx.upload(x);
          dy.upload(y);
          kernel->run(alpha, dx.data(), beta, dy.data(), nullptr);
          KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
          dy.download(y);
        },
        at);
    for (int k : {1, 4, 9}) {
      expect_spmm_matches_reference<S>(
          [&](const CsrMatrix<S>& m, S alpha, const S* x, std::size_t ldx, S beta, S* y,
              std::size_t ldy, int kk) {
            cuda::CsrSpmm<S> spmm(on_device_transpose(m));
            spmm.run(alpha, x, ldx, beta, y, ldy, kk, nullptr);
            KSPMV_CUDA_CHECK(cudaDeviceSynchronize());  // before the matrix is freed
          },
          at, k);
    }
  }
}

#endif  // KSPMV_HAVE_CUDA

// ---- argument checks (no GPU needed: they throw before anything is enqueued) ----------------

TEST(CudaSpmmErrors, BadArgumentsThrowInvalidArgument) {
#ifndef KSPMV_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA backend";
#else
  // Never dereferenced: every call below fails its checks first.
  const CsrPointers<double, DeviceOffset> a{nullptr, nullptr, nullptr, 4, 3};
  double x[12] = {}, y[12] = {};
  EXPECT_THROW(cuda::csr_spmm(a, 1.0, x, 3, 0.0, y, 4, -1, nullptr, 4), InvalidArgument);
  EXPECT_THROW(cuda::csr_spmm(a, 1.0, x, 2, 0.0, y, 4, 2, nullptr, 4), InvalidArgument);  // ldx
  EXPECT_THROW(cuda::csr_spmm(a, 1.0, x, 3, 0.0, y, 3, 2, nullptr, 4), InvalidArgument);  // ldy
  for (int lanes : {0, 3, 64, -1})
    EXPECT_THROW(cuda::csr_spmm(a, 1.0, x, 3, 0.0, y, 4, 2, nullptr, lanes), InvalidArgument)
        << lanes;
  EXPECT_THROW(cuda::csr_spmm<double>(a, 1.0, x, 3, 0.0, nullptr, 4, 2, nullptr, 4),
               InvalidArgument);
  EXPECT_THROW(cuda::csr_spmm<double>(a, 1.0, nullptr, 3, 0.0, y, 4, 2, nullptr, 4),
               InvalidArgument);
  // The long-row path takes 1..kMaxVectorsPerPass vectors, at most as many as it was planned for.
  const Offset row_ptr[] = {0, 0, 0, 0, 0};
  EXPECT_THROW(cuda::LongRowPath<double>(row_ptr, 4, {}, cuda::kLongRowChunkNnz, 0),
               InvalidArgument);
  EXPECT_THROW(cuda::LongRowPath<double>(row_ptr, 4, {}, cuda::kLongRowChunkNnz,
                                         cuda::kMaxVectorsPerPass + 1),
               InvalidArgument);
  const cuda::LongRowPath<double> path(row_ptr, 4, {}, cuda::kLongRowChunkNnz, 2);
  EXPECT_THROW(path.run(a.col, a.val, 1.0, x, 3, 0.0, y, 4, 3, nullptr), InvalidArgument);
  EXPECT_THROW(path.run(a.col, a.val, 1.0, x, 3, 0.0, y, 4, 0, nullptr), InvalidArgument);
#endif
}

// The plan CsrSpmm shares with CSR-Vector, from the host row pointer alone.
TEST(CudaSpmmErrors, CsrVectorConfigResolvesLanesAndThreshold) {
#ifndef KSPMV_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA backend";
#else
  const auto planted =
      gen::with_long_rows(gen::uniform_random<double>(2000, 3000, 4, 5), 3, 3000, 6);
  const Offset* row_ptr = planted.row_ptr.data();
  // Mean 6.6 over 2000 rows (the rows of at most 4096 entries): 8 lanes, 128 * 8 entries.
  const cuda::CsrVectorConfig automatic = cuda::resolve_csr_vector_config(row_ptr, 2000, {});
  EXPECT_EQ(automatic.vector_size, 8);
  EXPECT_EQ(automatic.long_row_threshold, 1024);
  const cuda::CsrVectorConfig given = cuda::resolve_csr_vector_config(row_ptr, 2000, {2, 0});
  EXPECT_EQ(given.vector_size, 2);
  EXPECT_EQ(given.long_row_threshold, 256);
  const cuda::CsrVectorConfig both = cuda::resolve_csr_vector_config(row_ptr, 2000, {16, 7});
  EXPECT_EQ(both.vector_size, 16);
  EXPECT_EQ(both.long_row_threshold, 7);
  for (int lanes : {-1, 3, 64})
    EXPECT_THROW(cuda::resolve_csr_vector_config(row_ptr, 2000, {lanes, 0}), InvalidArgument)
        << lanes;
  EXPECT_THROW(cuda::resolve_csr_vector_config(row_ptr, 2000, {4, -1}), InvalidArgument);
#endif
}

}  // namespace
}  // namespace kspmv::test

// Options::reorder on the CUDA backend (skipped without a device): device vectors gathered and
// scattered on the device, in the caller's order and the permuted one, one and two columns,
// host vectors through the same operator, and CG on P A P^T; vectors moved in windows as by one
// gather; bfs found on the device as on the host; column stripes with every kernel,
// block applies, the transpose and new values; all against the host reference on a poisoned y.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "kspmv/analysis/locality.hpp"
#include "kspmv/analysis/ordering.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/formats/permute.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/registry.hpp"
#include "kspmv/solvers/cg.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/memory.hpp"
#endif

namespace kspmv::test {
namespace {

#ifdef KSPMV_HAVE_CUDA

class CudaReorderTest : public GpuTest {};

// A 2D Laplacian numbered at random.
template <class S>
CsrMatrix<S> scrambled_grid(Ordinal nx) {
  std::vector<Ordinal> perm(nx * nx);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(5);
  std::shuffle(perm.begin(), perm.end(), rng);
  return permute_symmetric(gen::laplace2d<S>(nx, nx), perm);
}

template <class S>
void check_orderings() {
  const std::vector<std::pair<std::string, CsrMatrix<S>>> matrices = {
      {"k-mer", gen::kmer<S>(6000, 3)}, {"scrambled grid", scrambled_grid<S>(70)}};
  for (const auto& [name, a] : matrices) {
    const Ordinal n = a.nrows;
    constexpr int k = 2;
    std::vector<S> x(n * k), y0(n * k);
    for (int c = 0; c < k; ++c) {
      const auto xc = random_vector<S>(n, 70 + c), yc = random_vector<S>(n, 80 + c);
      std::copy(xc.begin(), xc.end(), x.begin() + c * n);
      std::copy(yc.begin(), yc.end(), y0.begin() + c * n);
    }
    for (const Reorder r : {Reorder::Rcm, Reorder::Degree, Reorder::Bfs, Reorder::Auto}) {
      Options o;
      o.backend = Backend::Cuda, o.reorder = r;
      Operator<S> op(a, o);
      const auto& perm = op.permutation();
      for (const bool permuted : {false, true}) {
        if (permuted && perm.empty()) continue;
        SCOPED_TRACE(name + " " + to_string(r) + (permuted ? " permuted" : " caller's order"));
        // In the operator's order: the caller's, or entry i = the caller's perm[i].
        std::vector<S> xs(n * k), ys(n * k);
        for (int c = 0; c < k; ++c)
          for (Ordinal i = 0; i < n; ++i) {
            xs[i + c * n] = x[(permuted ? perm[i] : i) + c * n];
            ys[i + c * n] = y0[(permuted ? perm[i] : i) + c * n];
          }
        for (const S beta : {S(0), S(0.5)}) {
          cuda::DeviceBuffer<S> dx(n * k), dy(n * k);
          dx.upload(xs.data());
          dy.upload(ys.data());
          if (beta == S(0)) KSPMV_CUDA_CHECK(cudaMemset(dy.data(), 0xff, dy.bytes()));
          op.use_permuted_order(permuted);
          op.apply(nullptr, S(2), dx.data(), beta, dy.data(), k);
          op.synchronize();
          std::vector<S> got(n * k);
          dy.download(got.data());
          for (int c = 0; c < k; ++c) {
            std::vector<S> ref(y0.begin() + c * n, y0.begin() + (c + 1) * n), yc(n);
            const std::vector<S> y0c = ref;
            reference::spmv(S(2), a, x.data() + c * n, beta, ref.data());
            for (Ordinal i = 0; i < n; ++i) yc[permuted ? perm[i] : i] = got[i + c * n];
            EXPECT_LE(spmv_error(yc, ref, S(2), a, x.data() + c * n, beta, y0c),
                      reference::tolerance<S>())
                << "column " << c << ", beta " << beta;
          }
        }
      }
      op.use_permuted_order(false);
      // Host vectors through the same operator.
      std::vector<S> y = nan_vector<S>(n), ref(n);
      op.apply(S(1), x.data(), S(0), y.data());
      reference::spmv(S(1), a, x.data(), S(0), ref.data());
      EXPECT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), {}), reference::tolerance<S>());
    }
  }
}

TEST_F(CudaReorderTest, EveryOrderingGivesTheYOfNoOrderingOnDeviceVectorsFloat) {
  check_orderings<float>();
}
TEST_F(CudaReorderTest, EveryOrderingGivesTheYOfNoOrderingOnDeviceVectorsDouble) {
  check_orderings<double>();
}

TEST_F(CudaReorderTest, CgOnTheReorderedMatrixSolvesTheSystem) {
  const auto a = scrambled_grid<double>(60);
  const auto b = random_vector<double>(a.nrows, 90);
  for (const Reorder r : {Reorder::Rcm, Reorder::Bfs}) {
    SCOPED_TRACE(to_string(r));
    Options o;
    o.backend = Backend::Cuda, o.reorder = r;
    Operator<double> op(a, o);
    std::vector<double> x(a.ncols, 0.0), res_vec = b;
    const CgResult res = cg(op, b.data(), x.data(), {1e-10, 5000});
    EXPECT_TRUE(res.converged);
    reference::spmv(-1.0, a, x.data(), 1.0, res_vec.data());  // the caller's order, on the host
    double rr = 0, bb = 0;
    for (std::size_t i = 0; i < b.size(); ++i) rr += res_vec[i] * res_vec[i], bb += b[i] * b[i];
    EXPECT_LE(std::sqrt(rr / bb), 1e-9);
  }
}

// Reorder::Bfs found on the device: the permutation of analysis::bfs_order, bit for bit, on the
// square matrices of the edge-case zoo, a k-mer graph and a scrambled grid; P A P^T built there
// gives y (host vectors, a poisoned y), its transpose and new values as the host reference.
template <class S>
void check_bfs_on_device() {
  auto matrices = zoo<S>();
  matrices.emplace_back("k-mer", gen::kmer<S>(20000, 3));
  matrices.emplace_back("scrambled grid", scrambled_grid<S>(50));
  for (const auto& [name, a] : matrices) {
    if (a.nrows != a.ncols) continue;
    SCOPED_TRACE(name);
    const Ordinal n = a.nrows;
    Options o;
    o.backend = Backend::Cuda, o.reorder = Reorder::Bfs;
    Operator<S> op(a, o);
    EXPECT_EQ(op.reorder(), Reorder::Bfs);
    EXPECT_EQ(op.permutation(), analysis::bfs_order(a.row_ptr.data(), a.col_idx.data(), n));
    const auto x = random_vector<S>(n, 16), y0 = random_vector<S>(n, 17);
    const auto check = [&](const CsrMatrix<S>& m, Mode mode, S beta, const char* what) {
      std::vector<S> y = beta == S(0) ? nan_vector<S>(n) : y0, ref = y0;
      Kokkos::View<const S*, Kokkos::HostSpace> xv(x.data(), n);
      op.apply(S(2), xv, beta, Kokkos::View<S*, Kokkos::HostSpace>(y.data(), n), mode);
      reference::spmv(S(2), m, x.data(), beta, ref.data());
      EXPECT_LE(spmv_error(y, ref, S(2), m, x.data(), beta, y0), reference::tolerance<S>())
          << what << ", beta " << beta;
    };
    for (const S beta : {S(0), S(0.5)}) {
      check(a, Mode::NoTranspose, beta, "y");
      check(transpose(a), Mode::Transpose, beta, "transpose");
    }
    CsrMatrix<S> b = a;  // new values, the pattern kept
    b.values = HostView<S>("new values", a.values.extent(0));
    const auto v = random_vector<S>(a.values.extent(0), 18);
    for (std::size_t e = 0; e < v.size(); ++e) b.values(e) = v[e];
    op.update_values(v.data(), v.size(), false);
    check(b, Mode::NoTranspose, S(0), "new values");
    check(transpose(b), Mode::Transpose, S(0), "new values, transpose");
  }
}

// Device vectors moved in windows (cuda::WindowedGather) as by one gather or scatter: random
// permutations, windows of one entry up to all of them, two columns at a leading dimension past
// n, outputs poisoned first.
template <class S>
void check_windows() {
  for (const Ordinal n : {1, 2, 1000, 100003}) {
    std::vector<Ordinal> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 rng(n);
    std::shuffle(perm.begin(), perm.end(), rng);
    constexpr int k = 2;
    const std::size_t ld = n + 3;
    const auto in = random_vector<S>(ld * k, 31);
    cuda::DeviceBuffer<S> d_in(ld * k), d_out(ld * k);
    d_in.upload(in.data());
    for (const Ordinal window : {0, 1, 7, 1000, n}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", window " + std::to_string(window));
      auto p = detail::make_vector_permutation<S>(perm, Backend::Cuda, Place::Device, 0, window);
      std::vector<S> out(ld * k);
      KSPMV_CUDA_CHECK(cudaMemset(d_out.data(), 0xff, d_out.bytes()));
      p->gather(d_in.data(), ld, d_out.data(), k, nullptr);
      d_out.download(out.data());
      for (int c = 0; c < k; ++c)
        for (Ordinal i = 0; i < n; ++i)
          ASSERT_EQ(out[c * n + i], in[c * ld + perm[i]]) << "gather, column " << c << ", " << i;
      KSPMV_CUDA_CHECK(cudaMemset(d_out.data(), 0xff, d_out.bytes()));
      p->scatter(d_in.data(), d_out.data(), ld, k, nullptr);
      d_out.download(out.data());
      for (int c = 0; c < k; ++c) {
        for (Ordinal i = 0; i < n; ++i)
          ASSERT_EQ(out[c * ld + perm[i]], in[c * n + i]) << "scatter, column " << c << ", " << i;
        for (std::size_t i = n; i < ld; ++i) ASSERT_TRUE(std::isnan(out[c * ld + i]));
      }
    }
  }
}

TEST_F(CudaReorderTest, VectorsMovedInWindowsAsByOneGatherFloat) {
  check_windows<float>();
}
TEST_F(CudaReorderTest, VectorsMovedInWindowsAsByOneGatherDouble) {
  check_windows<double>();
}

// Auto on the device, where x (8.4e6 doubles, or twice the L2) overflows the L2: on a k-mer graph
// numbered at random, bfs kept for the permuted order and for the caller's (its vectors moved in
// windows); on a random pattern (in one stripe, so that stripes are not taken), bfs computed on
// the device and rejected by the model (A run from the upload the ordering ran on); none at once
// on a banded matrix (its columns clustered already). y against the host reference on a poisoned
// y, in the caller's order.
TEST_F(CudaReorderTest, AutoOnTheDeviceKeepsBfsWhereItPaysAndElseRunsA) {
  const Ordinal n = std::max<Ordinal>(Ordinal(1) << 23, Ordinal(cuda_l2_cache_bytes(0) / 4));
  const auto kmer = gen::kmer<double>(n, 4), band = gen::banded<double>(n, 1);
  const auto noise = gen::uniform_random<double>(n, n, 4, 5);
  struct Case {
    const CsrMatrix<double>& a;
    bool permuted_applies;
    Reorder kept;
  };
  const Case cases[] = {{kmer, true, Reorder::Bfs},
                        {kmer, false, Reorder::Bfs},
                        {noise, false, Reorder::None},
                        {band, true, Reorder::None}};
  const auto x = random_vector<double>(n, 19);
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.kept)) +
                 (c.permuted_applies ? ", permuted" : ", caller's") +
                 (&c.a == &noise ? ", random" : ""));
    Options o;
    o.backend = Backend::Cuda, o.reorder = Reorder::Auto, o.permuted_applies = c.permuted_applies;
    o.stripe_columns = n;
    Operator<double> op(c.a, o);
    EXPECT_EQ(op.reorder(), c.kept);
    const Timings t = op.timings();
    if (c.kept == Reorder::Bfs)
      EXPECT_LT(t.reorder_model, analysis::kReorderShare);
    else
      EXPECT_GT(t.reorder_model, analysis::kReorderShare);
    EXPECT_GT(t.upload_ms, 0);  // A's upload, by the ordering or by the operator
    std::vector<double> y = nan_vector<double>(n), ref(n);
    op.apply(1.0, x.data(), 0.0, y.data());
    reference::spmv(1.0, c.a, x.data(), 0.0, ref.data());
    EXPECT_LE(spmv_error(y, ref, 1.0, c.a, x.data(), 0.0, {}), reference::tolerance<double>());
  }
}

TEST_F(CudaReorderTest, BfsOnTheDeviceIsTheHostsOrderingFloat) {
  check_bfs_on_device<float>();
}
TEST_F(CudaReorderTest, BfsOnTheDeviceIsTheHostsOrderingDouble) {
  check_bfs_on_device<double>();
}

// Reorder::Stripes with narrow stripes (many per matrix) on the edge-case zoo and a k-mer graph,
// with every resident kernel, Auto (per stripe, and autotuned): device vectors (alpha 2, beta 0
// on a poisoned y and beta 0.5, alpha 0), three columns, host vectors, the transpose, and new
// values.
template <class S>
void check_stripes() {
  auto matrices = zoo<S>();
  matrices.emplace_back("k-mer", gen::kmer<S>(3000, 3));
  std::vector<std::pair<Kernel, bool>> kernels = {{Kernel::Auto, false}, {Kernel::Auto, true}};
  for (const auto& row : kernels_of(Backend::Cuda))
    if (row.residency == Residency::Resident) kernels.emplace_back(row.kernel, false);
  for (const auto& [name, a] : matrices) {
    const Ordinal m = a.nrows, n = a.ncols;
    for (const auto& [kernel, tuned] : kernels) {
      SCOPED_TRACE(name + " " + to_string(kernel) + (tuned ? " autotuned" : ""));
      Options o;
      o.backend = Backend::Cuda, o.kernel = kernel, o.autotune = tuned;
      o.reorder = Reorder::Stripes, o.stripe_columns = std::max<Ordinal>(1, n / 5);
      Operator<S> op(a, o);
      EXPECT_EQ(op.reorder(), Reorder::Stripes);
      EXPECT_TRUE(op.permutation().empty());
      constexpr int k = 3;
      const auto x = random_vector<S>(std::size_t(n) * k, 11);
      const auto y0 = random_vector<S>(std::size_t(m) * k, 12);
      // Each column of got against the oracle's alpha*B*xs + beta*ys (ys: the y it started from).
      const auto check = [&](const std::vector<S>& got, S alpha, S beta, const CsrMatrix<S>& b,
                             const std::vector<S>& xs, const std::vector<S>& ys, const char* what) {
        const std::size_t rows = std::size_t(b.nrows), cols = std::size_t(b.ncols);
        for (std::size_t c = 0; c * rows < got.size(); ++c) {
          const std::vector<S> y0c(ys.begin() + c * rows, ys.begin() + (c + 1) * rows);
          std::vector<S> ref = y0c, yc(got.begin() + c * rows, got.begin() + (c + 1) * rows);
          reference::spmv(alpha, b, xs.data() + c * cols, beta, ref.data());
          EXPECT_LE(spmv_error(yc, ref, alpha, b, xs.data() + c * cols, beta, y0c),
                    reference::tolerance<S>())
              << what << ", column " << c << ", alpha " << alpha << ", beta " << beta;
        }
      };
      for (const auto [alpha, beta] : {std::pair<S, S>{2, 0}, {2, 0.5}, {0, 0.5}}) {
        for (const int cols : {1, k}) {
          cuda::DeviceBuffer<S> dx(std::max<std::size_t>(1, std::size_t(n) * cols));
          cuda::DeviceBuffer<S> dy(std::max<std::size_t>(1, std::size_t(m) * cols));
          if (n > 0) dx.upload(x.data());
          if (m > 0) dy.upload(y0.data());
          if (beta == S(0)) KSPMV_CUDA_CHECK(cudaMemset(dy.data(), 0xff, dy.bytes()));
          op.apply(nullptr, alpha, dx.data(), beta, dy.data(), cols);
          op.synchronize();
          std::vector<S> got(std::size_t(m) * cols);
          if (m > 0) dy.download(got.data());
          check(got, alpha, beta, a, x, y0, cols == 1 ? "device vector" : "device block");
        }
      }
      std::vector<S> y(y0.begin(), y0.begin() + m);
      op.apply(S(2), x.data(), S(0.5), y.data());
      check(y, S(2), S(0.5), a, x, y0, "host vectors");
      {  // the transpose: x of m entries, y of n
        const auto xt = random_vector<S>(std::size_t(m), 14);
        const auto yt = random_vector<S>(std::size_t(n), 15);
        cuda::DeviceBuffer<S> dx(std::max<Ordinal>(1, m)), dy(std::max<Ordinal>(1, n));
        if (m > 0) dx.upload(xt.data());
        if (n > 0) dy.upload(yt.data());
        op.apply(nullptr, S(2), dx.data(), S(0.5), dy.data(), 1, Mode::Transpose);
        op.synchronize();
        std::vector<S> got(n);
        if (n > 0) dy.download(got.data());
        check(got, S(2), S(0.5), transpose(a), xt, yt, "transpose");
      }
      CsrMatrix<S> b = a;  // new values, the pattern kept
      b.values = HostView<S>("new values", a.values.extent(0));
      const auto v = random_vector<S>(a.values.extent(0), 13);
      for (std::size_t e = 0; e < v.size(); ++e) b.values(e) = v[e];
      op.update_values(v.data(), v.size(), false);
      std::vector<S> yv = nan_vector<S>(m);
      op.apply(S(2), x.data(), S(0), yv.data());
      check(yv, S(2), S(0), b, x, y0, "new values");
    }
  }
}

TEST_F(CudaReorderTest, StripesGiveTheYOfTheWholeMatrixFloat) {
  check_stripes<float>();
}
TEST_F(CudaReorderTest, StripesGiveTheYOfTheWholeMatrixDouble) {
  check_stripes<double>();
}

// CG on stripes solves the system; auto keeps no stripes where x fits the L2.
TEST_F(CudaReorderTest, CgOnStripesSolvesTheSystemAndAutoLeavesASmallX) {
  const auto a = gen::laplace2d<double>(60, 60);
  const auto b = random_vector<double>(a.nrows, 91);
  Options o;
  o.backend = Backend::Cuda, o.reorder = Reorder::Stripes, o.stripe_columns = 500;
  Operator<double> op(a, o);
  std::vector<double> x(a.ncols, 0.0), r = b;
  const CgResult res = cg(op, b.data(), x.data(), {1e-10, 5000});
  EXPECT_TRUE(res.converged);
  reference::spmv(-1.0, a, x.data(), 1.0, r.data());
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < r.size(); ++i) rr += r[i] * r[i], bb += b[i] * b[i];
  EXPECT_LE(std::sqrt(rr / bb), 1e-9);
  o.reorder = Reorder::Auto, o.stripe_columns = 0;
  EXPECT_EQ(Operator<double>(a, o).reorder(), Reorder::None);
}

#endif

}  // namespace
}  // namespace kspmv::test

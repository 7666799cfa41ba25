// Options::reorder on the CUDA backend (skipped without a device): device vectors gathered and
// scattered on the device, in the caller's order and the permuted one, one and two columns,
// host vectors through the same operator, and CG on P A P^T, all against the host reference on
// a poisoned y.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "kspmv/formats/permute.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
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
    for (const Reorder r : {Reorder::Rcm, Reorder::Degree, Reorder::Auto}) {
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
  Options o;
  o.backend = Backend::Cuda, o.reorder = Reorder::Rcm;
  Operator<double> op(a, o);
  std::vector<double> x(a.ncols, 0.0), r = b;
  const CgResult res = cg(op, b.data(), x.data(), {1e-10, 5000});
  EXPECT_TRUE(res.converged);
  reference::spmv(-1.0, a, x.data(), 1.0, r.data());  // the caller's order, on the host
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < r.size(); ++i) rr += r[i] * r[i], bb += b[i] * b[i];
  EXPECT_LE(std::sqrt(rr / bb), 1e-9);
}

#endif

}  // namespace
}  // namespace kspmv::test

// Host CG (Gao et al. 2024, Alg. 1) on 2D Laplacians: converges to the stated tolerance, and the
// returned residual is the true one, recomputed here with the long-double reference. Jacobi-
// preconditioned CG (Saad 2003, Alg. 9.1) on generator matrices, plain and badly scaled, on the
// host (one device and emulated devices) and kokkos-default backends, and its monitor and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/solvers/cg.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

template <class S>
class CgTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CgTest, Scalars);

TYPED_TEST(CgTest, ConvergesOnLaplace2dToTheStatedTolerance) {
  using S = TypeParam;
  const double tol = std::is_same_v<S, float> ? 1e-5 : 1e-10;
  const auto a = gen::laplace2d<S>(40, 30);
  Operator<S> op(a);
  const auto b = random_vector<S>(a.nrows, 7);
  std::vector<S> x(a.ncols, S(0));
  const CgResult res = cg(op, b.data(), x.data(), {tol, 2000});
  EXPECT_TRUE(res.converged);
  EXPECT_GT(res.iterations, 10);
  EXPECT_LT(res.iterations, 2000);
  EXPECT_NEAR(res.relative_residual, true_relative_residual(a, b, x),
              1e-3 * res.relative_residual + 1e-12);
  EXPECT_LE(res.relative_residual, 10 * tol);  // float: the true residual may drift a little
  EXPECT_GE(res.ms_per_iteration, 0);
}

TYPED_TEST(CgTest, StartsFromTheGivenGuessAndStopsAtOnceWhenItSolves) {
  using S = TypeParam;
  const auto a = gen::laplace2d<S>(10, 10);
  Operator<S> op(a);
  std::vector<S> x_true = random_vector<S>(a.ncols, 3), b(a.nrows);
  reference::spmv(S(1), a, x_true.data(), S(0), b.data());
  std::vector<S> x = x_true;
  const CgResult res = cg(op, b.data(), x.data(), {1e-3, 100});
  EXPECT_EQ(res.iterations, 0);
  EXPECT_TRUE(res.converged);
}

// The generator matrices PCG is tried on: SPD, of a few shapes, each also badly scaled (over 4
// decades in double; over 2 in float, where A x rounded to float cannot show a residual of 1e-4
// once the scales span 4: the true residual stalls near 1e-3 though the iterated one converges).
template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> spd_matrices() {
  const double decades = std::is_same_v<S, float> ? 2.0 : 4.0;
  std::vector<std::pair<std::string, CsrMatrix<S>>> m = {
      {"laplace2d 40x30", gen::laplace2d<S>(40, 30)},
      {"stencil3d_7 12", gen::stencil3d_7<S>(12)},
      {"stencil3d_27 9", gen::stencil3d_27<S>(9)},
      {"banded 900/6", gen::banded<S>(900, 6)}};
  for (std::size_t k = 0, n = m.size(); k < n; ++k)
    m.emplace_back(m[k].first + " scaled", badly_scaled(m[k].second, decades, 11 + k));
  return m;
}

TYPED_TEST(CgTest, JacobiConvergesOnGeneratorMatricesToTheReferenceSolve) {
  using S = TypeParam;
  const double tol = std::is_same_v<S, float> ? 1e-5 : 1e-10;
  std::uint64_t seed = 21;
  for (const auto& [name, a] : spd_matrices<S>()) {
    const auto b = random_vector<S>(a.nrows, seed++);
    const Jacobi<S> m(a);
    for (const auto& [backend, devices] : std::vector<std::pair<Backend, std::vector<int>>>{
             {Backend::Host, {0}}, {Backend::Host, {0, 0, 0}}, {Backend::KokkosDefault, {0}}}) {
      Options o;
      o.backend = backend;
      o.devices = devices;
      Operator<S> op(a, o);
      std::vector<S> x(a.ncols, S(0));
      const CgResult res = cg(op, b.data(), x.data(), {tol, 5000}, &m);
      const std::string what =
          name + " on " + to_string(backend) + ", " + std::to_string(devices.size()) + " device(s)";
      EXPECT_TRUE(res.converged) << what;
      EXPECT_EQ(res.stop, CgStop::Converged) << what;
      // The residual of x from the reference SpMV, not from the solver's bookkeeping.
      const double truth = true_relative_residual(a, b, x);
      EXPECT_LE(truth, 10 * tol) << what;
      EXPECT_NEAR(res.relative_residual, truth, 1e-3 * truth + 1e-12) << what;
    }
  }
}

TYPED_TEST(CgTest, JacobiTakesFewerIterationsOnABadlyScaledMatrix) {
  using S = TypeParam;
  const double tol = std::is_same_v<S, float> ? 1e-4 : 1e-8;
  const auto base = gen::laplace2d<S>(30, 30);
  const auto a = badly_scaled(base, 4.0, 5);
  const auto b = random_vector<S>(a.nrows, 9);
  Operator<S> op(a), op_base(base);
  const Jacobi<S> m(a);
  std::vector<S> x_plain(a.ncols, S(0)), x_jacobi(a.ncols, S(0)), x_base(a.ncols, S(0));
  const CgResult plain = cg(op, b.data(), x_plain.data(), {tol, 20000});
  const CgResult jacobi = cg(op, b.data(), x_jacobi.data(), {tol, 20000}, &m);
  const CgResult unscaled = cg(op_base, b.data(), x_base.data(), {tol, 20000});
  ASSERT_TRUE(jacobi.converged);
  EXPECT_LE(true_relative_residual(a, b, x_jacobi), 10 * tol);
  // Jacobi undoes the scaling: about the iterations of the unscaled Laplacian, and far fewer
  // than plain CG needs (or than it ran before giving up).
  EXPECT_LE(jacobi.iterations, 2 * unscaled.iterations);
  EXPECT_LT(5 * jacobi.iterations, plain.iterations);
}

TEST(CgMonitorTest, SeesEveryIterationInOrderEndingWithTheStop) {
  const auto a = badly_scaled(gen::laplace2d<double>(20, 20), 2.0, 3);
  const auto b = random_vector<double>(a.nrows, 4);
  Operator<double> op(a);
  const Jacobi<double> m(a);
  std::vector<double> x(a.ncols, 0.0);
  std::vector<int> its;
  std::vector<double> res;
  const CgResult r = cg(op, b.data(), x.data(), {1e-9, 1000}, &m, [&](int it, double rel) {
    its.push_back(it);
    res.push_back(rel);
  });
  ASSERT_TRUE(r.converged);
  ASSERT_EQ(its.size(), static_cast<std::size_t>(r.iterations) + 1);
  for (std::size_t k = 0; k < its.size(); ++k) EXPECT_EQ(its[k], static_cast<int>(k));
  EXPECT_DOUBLE_EQ(res.front(), 1.0);  // x0 = 0: r = b
  EXPECT_LE(res.back(), 1e-9);
  EXPECT_GT(res[res.size() - 2], 1e-9);  // it stopped at the first iteration below
}

TEST(JacobiTest, RejectsMissingZeroAndNegativeDiagonalsNamingTheRow) {
  const auto expect_error = [](const CsrMatrix<double>& a, const std::string& part) {
    try {
      Jacobi<double> m(a);
      ADD_FAILURE() << "no error, expected one with '" << part << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error(from_triplets<double>(3, 3, {{0, 0, 2.0}, {1, 2, 1.0}, {2, 2, 1.0}}),
               "row 2 has no diagonal entry");
  expect_error(from_triplets<double>(2, 2, {{0, 0, 2.0}, {1, 1, 0.0}}), "row 2 has the diagonal");
  expect_error(from_triplets<double>(2, 2, {{0, 0, -1.0}, {1, 1, 1.0}}), "row 1 has the diagonal");
  expect_error(random_matrix<double>(4, 5, 2, 1), "not square");
  const Jacobi<double> m(from_triplets<double>(2, 2, {{0, 0, 2.0}, {0, 1, 1.0}, {1, 1, 0.5}}));
  EXPECT_EQ(m.inverse_diagonal(), (std::vector<double>{0.5, 2.0}));
  // A preconditioner of another size is refused by cg.
  const auto a = gen::laplace2d<double>(3, 3);
  Operator<double> op(a);
  std::vector<double> b(a.nrows, 1.0), x(a.ncols, 0.0);
  EXPECT_THROW(cg(op, b.data(), x.data(), {}, &m), InvalidArgument);
}

TEST(CgErrorsTest, ZeroRightHandSideAndBadInput) {
  const auto a = gen::laplace2d<double>(5, 5);
  Operator<double> op(a);
  std::vector<double> b(a.nrows, 0.0), x(a.ncols, 1.0);
  const CgResult res = cg(op, b.data(), x.data());
  EXPECT_TRUE(res.converged);
  EXPECT_EQ(res.iterations, 0);
  EXPECT_EQ(x, std::vector<double>(a.ncols, 0.0));
  EXPECT_THROW(cg(op, b.data(), x.data(), {-1.0, 10}), InvalidArgument);
  const auto rect = random_matrix<double>(5, 6, 2, 1);
  Operator<double> op_rect(rect);
  std::vector<double> b5(5, 1.0), x6(6, 0.0);
  EXPECT_THROW(cg(op_rect, b5.data(), x6.data()), InvalidArgument);
}

}  // namespace
}  // namespace kspmv::test

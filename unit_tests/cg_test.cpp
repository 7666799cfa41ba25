// Host CG (Gao et al. 2024, Alg. 1) on 2D Laplacians: converges to the stated tolerance, and the
// returned residual is the true one, recomputed here with the long-double reference.
#include <gtest/gtest.h>

#include <cmath>
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

template <class S>
double true_relative_residual(const CsrMatrix<S>& a, const std::vector<S>& b,
                              const std::vector<S>& x) {
  std::vector<S> r = b;
  reference::spmv(S(-1), a, x.data(), S(1), r.data());
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    rr += double(r[i]) * r[i];
    bb += double(b[i]) * b[i];
  }
  return std::sqrt(rr / bb);
}

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

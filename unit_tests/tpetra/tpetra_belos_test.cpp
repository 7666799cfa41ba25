// Belos on the kspmv-backed operator against Belos on the Tpetra::CrsMatrix itself: CG on a 3D
// Poisson problem, GMRES on a 3D convection-diffusion problem; the same iteration counts (within
// one), both converged, and the true residual ||b - A x|| / ||b|| recomputed with Tpetra's SpMV.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tpetra_test.hpp"

namespace kspmv::test {
namespace {

// Solves with `method` on the kspmv operator and on `a`, k right-hand sides, from x = 0.
void expect_same_solve(const std::string& method, const Teuchos::RCP<TpetraMatrix>& a,
                       std::size_t k, double tol) {
  const auto b = tools::random_vectors(a->getRangeMap(), k, 21);
  TpetraVectors x_kspmv(a->getDomainMap(), k), x_tpetra(a->getDomainMap(), k);
  const auto op = Teuchos::rcp(new TpetraOperator<double>(a));
  const auto ours = tools::belos_solve(method, op, *a, *b, x_kspmv, tol, 1000, 30);
  const auto theirs = tools::belos_solve(method, a, *a, *b, x_tpetra, tol, 1000, 30);
  EXPECT_TRUE(ours.converged) << method;
  EXPECT_TRUE(theirs.converged) << method;
  EXPECT_GT(ours.iterations, 10) << method;  // a real solve, not a trivial one
  EXPECT_NEAR(ours.iterations, theirs.iterations, 1) << method;
  // Belos stops on its recursive residual; the true one drifts from it by rounding only.
  EXPECT_LE(ours.true_residual, 2 * tol) << method;
  EXPECT_LE(theirs.true_residual, 2 * tol) << method;
  EXPECT_LE(tools::max_relative_error(x_kspmv, x_tpetra), 1e-5) << method;
  if (comm()->getRank() == 0)
    std::printf(
        "  %s, %zu right-hand side(s), %d ranks: %d iterations (Tpetra's own SpMV: %d), "
        "true residual %.2e\n",
        method.c_str(), k, comm()->getSize(), ours.iterations, theirs.iterations,
        ours.true_residual);
}

TEST(TpetraBelos, CgOnPoissonLikeBelosOnTheCrsMatrix) {
  const auto a = generated("stencil7:n=16");
  expect_same_solve("cg", a, 1, 1e-8);
  expect_same_solve("cg", a, 3, 1e-10);
}

TEST(TpetraBelos, GmresOnConvectionDiffusionLikeBelosOnTheCrsMatrix) {
  const auto a = convection_diffusion(14, 0.4);
  expect_same_solve("gmres", a, 1, 1e-8);
  expect_same_solve("gmres", a, 2, 1e-9);
}

}  // namespace
}  // namespace kspmv::test

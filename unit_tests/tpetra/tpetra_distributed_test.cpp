// kspmv::MpiOperator, kspmv::mpi_cg and Belos on kspmv's own distributed vectors, with the host
// backend (the same code as on GPUs, host vectors): the apply against a serial reference of the
// whole matrix (output poisoned with NaN), the halo's plan, fused CG against kspmv::cg in one
// process, Belos CG and GMRES against Belos on the Tpetra::CrsMatrix.
#include <gtest/gtest.h>

#include <Teuchos_CommHelpers.hpp>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/interop/tpetra_belos.hpp"
#include "kspmv/interop/tpetra_distributed.hpp"
#include "kspmv/solvers/cg.hpp"
#include "testing/reference.hpp"
#include "tpetra_test.hpp"

namespace kspmv::test {
namespace {

constexpr double kTol = 1e-12;
using Vectors = MpiMultiVector<double>;

// Every global entry of k random vectors (random_vectors' values) on every rank.
std::vector<double> whole(Ordinal n, std::size_t k, std::uint64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(n) * k);
  for (std::size_t j = 0; j < k; ++j)
    for (Ordinal g = 0; g < n; ++g) v[g + j * n] = random_entry<double>(seed, g, j);
  return v;
}

// The relative error of Y = alpha*A*X + beta*Y by MpiOperator against the reference SpMV of the
// whole matrix on every rank; Y starts random, or NaN where beta == 0.
double apply_error(const std::string& spec, std::size_t k, double alpha, double beta) {
  const auto a = generated(spec);
  const MpiOperator<double> op(a);
  Vectors x = op.make_vectors(k), y = op.make_vectors(k);
  x.randomize(11);
  y.randomize(12);
  if (beta == 0) y.fill(std::numeric_limits<double>::quiet_NaN());
  op.apply(x, y, alpha, beta);

  const auto full = gen::from_spec<double>(spec);
  const Ordinal n = full.nrows;
  const std::vector<double> xs = whole(n, k, 11);
  std::vector<double> ys = whole(n, k, 12);
  for (std::size_t j = 0; j < k; ++j)
    reference::spmv(alpha, full, xs.data() + j * n, beta, ys.data() + j * n);
  TpetraVectors got(a->getRangeMap(), k), expected(a->getRangeMap(), k);
  y.copy_to(got);
  const auto e = expected.getLocalViewHost(Tpetra::Access::OverwriteAll);
  for (std::size_t j = 0; j < k; ++j)
    for (std::size_t i = 0; i < e.extent(0); ++i)
      e(i, j) = ys[a->getRowMap()->getGlobalElement(static_cast<int>(i)) + j * n];
  return tools::max_relative_error(got, expected);
}

TEST(MpiOperator, ApplyMatchesTheSerialReference) {
  // Symmetric stencils, scattered and nonsymmetric columns (a halo that differs each way).
  for (const std::string spec :
       {"stencil27:n=9", "laplace2d:n=23", "uniform:rows=700,k=5", "fullchip:rows=1500"})
    for (const std::size_t k : {1, 3})
      for (const auto& [alpha, beta] :
           std::vector<std::pair<double, double>>{{1, 0}, {-0.5, 2}, {0, 0.5}})
        EXPECT_LE(apply_error(spec, k, alpha, beta), kTol)
            << spec << " k " << k << " alpha " << alpha << " beta " << beta;
}

TEST(MpiOperator, PlansTheHaloFromTheImportAndKeepsInteriorRowsFirst) {
  const auto a = generated("stencil27:n=12");  // slabs of planes: a plane of 144 each way
  const MpiOperator<double> op(a);
  const auto ranks = comm()->getSize(), r = comm()->getRank();
  const std::size_t owned = op.layout()->owned;
  EXPECT_EQ(owned, local_count(*a->getRowMap()));
  const std::size_t halo = local_count(*a->getColMap()) - owned;
  EXPECT_EQ(op.received(), halo);  // every ghost, nothing more
  EXPECT_EQ(op.neighbours(), static_cast<std::size_t>((r > 0) + (r < ranks - 1)));
  if (ranks == 1) {
    EXPECT_EQ(op.interior_rows(), owned);
    EXPECT_TRUE(op.layout()->order.empty());  // nothing to reorder
  } else {
    EXPECT_LT(op.interior_rows(), owned);
    EXPECT_GT(op.interior_rows(), 0u);
    EXPECT_EQ(op.sent(), op.received());  // symmetric pattern
  }
}

TEST(MpiOperator, RefusesForeignVectorsAndSharedColumns) {
  const auto a = generated("laplace2d:n=10");
  const MpiOperator<double> op(a), other(a);
  Vectors x = op.make_vectors(2), y = op.make_vectors(2), z = other.make_vectors(2);
  EXPECT_THROW(op.apply(x, z), InvalidArgument);
  EXPECT_THROW(op.apply(x, x), InvalidArgument);
  Vectors y0 = y.view({0}), x1 = x.view({1});
  EXPECT_THROW(op.apply(x, y0), InvalidArgument);               // 2 vectors into 1
  EXPECT_THROW(op.apply(x.view({0, 1}), x1), InvalidArgument);  // x_1 is read and written
  const auto rect = generated("uniform:rows=400,k=4,cols=260");
  EXPECT_THROW(MpiOperator<double>{rect}, InvalidArgument);
}

TEST(MpiOperator, VectorOperationsReduceOverTheRanks) {
  const auto a = generated("stencil7:n=10");
  const MpiOperator<double> op(a);
  Vectors x = op.make_vectors(2), y = op.make_vectors(2);
  x.randomize(5);
  y.randomize(6);
  TpetraVectors xt(a->getRowMap(), 2), yt(a->getRowMap(), 2);
  x.copy_to(xt);
  y.copy_to(yt);
  std::vector<double> dots(2), n1(2), ninf(2);
  xt.dot(yt, Teuchos::ArrayView<double>(dots));
  xt.norm1(Teuchos::ArrayView<double>(n1));
  xt.normInf(Teuchos::ArrayView<double>(ninf));
  const auto d = x.dot(y), p = x.dot(y, true), o = x.norms(Reduction::AbsSum),
             m = x.norms(Reduction::AbsMax);
  for (std::size_t j = 0; j < 2; ++j) {
    EXPECT_NEAR(d[j], dots[j], 1e-12 * std::abs(dots[j]) + 1e-12);
    EXPECT_NEAR(p[j * 3], dots[j], 1e-12 * std::abs(dots[j]) + 1e-12);  // the diagonal pairs
    EXPECT_NEAR(o[j], n1[j], 1e-12 * n1[j]);
    EXPECT_EQ(m[j], ninf[j]);
  }
  // x = 2 x - y, then back through Tpetra.
  x.combine(2, x, -1, y);
  xt.update(-1.0, yt, 2.0);
  TpetraVectors back(a->getRowMap(), 2);
  x.copy_to(back);
  EXPECT_LE(tools::max_relative_error(back, xt), kTol);
}

// kspmv's fused CG over the ranks against kspmv::cg on the whole matrix in one process: the same
// iterations (within one: sums in another order), both converged, the same solution.
TEST(MpiCg, SolvesLikeOneProcessCg) {
  for (const std::string spec : {"stencil27:n=14", "laplace2d:n=40"}) {
    const auto a = generated(spec);
    const MpiOperator<double> op(a);
    Vectors b = op.make_vectors(1), x = op.make_vectors(1);
    b.randomize(21);
    const CgOptions options{1e-9, 1000};
    const CgResult ours = mpi_cg(op, b, x, options);

    const auto full = gen::from_spec<double>(spec);
    Operator<double> one(full);
    const std::vector<double> bs = whole(full.nrows, 1, 21);
    std::vector<double> xs(bs.size(), 0.0);
    const CgResult theirs = cg(one, bs.data(), xs.data(), options);
    EXPECT_TRUE(ours.converged) << spec;
    EXPECT_EQ(ours.stop, CgStop::Converged) << spec;
    EXPECT_GT(ours.iterations, 10) << spec;
    EXPECT_NEAR(ours.iterations, theirs.iterations, 1) << spec;
    EXPECT_LE(ours.relative_residual, 2 * options.tolerance) << spec;
    TpetraVectors got(a->getRowMap(), 1), expected(a->getRowMap(), 1);
    x.copy_to(got);
    const auto e = expected.getLocalViewHost(Tpetra::Access::OverwriteAll);
    for (std::size_t i = 0; i < e.extent(0); ++i)
      e(i, 0) = xs[a->getRowMap()->getGlobalElement(static_cast<int>(i))];
    EXPECT_LE(tools::max_relative_error(got, expected), 1e-6) << spec;
    if (comm()->getRank() == 0)
      std::printf("  fused CG %s, %d ranks: %d iterations (one process: %d), residual %.2e\n",
                  spec.c_str(), comm()->getSize(), ours.iterations, theirs.iterations,
                  ours.relative_residual);
  }
}

TEST(MpiCg, StopsOnNonPositiveCurvatureAndTheIterationLimit) {
  const auto a = generated("uniform:rows=300,k=3");  // not SPD
  const MpiOperator<double> op(a);
  Vectors b = op.make_vectors(1), x = op.make_vectors(1);
  b.randomize(3);
  const CgResult broken = mpi_cg(op, b, x, {1e-10, 500});
  EXPECT_EQ(broken.stop, CgStop::NotPositive);
  EXPECT_FALSE(broken.converged);

  const auto spd = generated("stencil7:n=10");
  const MpiOperator<double> op2(spd);
  Vectors b2 = op2.make_vectors(1), x2 = op2.make_vectors(1);
  b2.randomize(3);
  const CgResult limited = mpi_cg(op2, b2, x2, {1e-12, 3});
  EXPECT_EQ(limited.iterations, 3);
  EXPECT_EQ(limited.stop, CgStop::MaxIterations);
  b2.fill(0);
  x2.fill(1);
  const CgResult zero = mpi_cg(op2, b2, x2, {});
  EXPECT_TRUE(zero.converged);
  EXPECT_EQ(x2.norms()[0], 0);
}

// Belos on kspmv's vectors against Belos on the Tpetra::CrsMatrix itself.
void expect_same_belos_solve(const std::string& method, const Teuchos::RCP<TpetraMatrix>& a,
                             std::size_t k, double tol) {
  const auto op = Teuchos::rcp(new MpiOperator<double>(a));
  Vectors b = op->make_vectors(k), x = op->make_vectors(k);
  b.randomize(21);
  const auto ours = tools::belos_solve(method, op, b, x, tol, 1000, 30);
  const auto bt = tools::random_vectors(a->getRangeMap(), k, 21);
  TpetraVectors xt(a->getDomainMap(), k);
  const auto theirs = tools::belos_solve(method, a, *a, *bt, xt, tol, 1000, 30);
  EXPECT_TRUE(ours.converged) << method;
  EXPECT_GT(ours.iterations, 10) << method;
  EXPECT_NEAR(ours.iterations, theirs.iterations, 1) << method;
  EXPECT_LE(ours.true_residual, 2 * tol) << method;
  TpetraVectors got(a->getDomainMap(), k);
  x.copy_to(got);
  EXPECT_LE(tools::max_relative_error(got, xt), 1e-5) << method;
  if (comm()->getRank() == 0)
    std::printf("  Belos %s on kspmv vectors, %zu rhs, %d ranks: %d iterations (Tpetra: %d)\n",
                method.c_str(), k, comm()->getSize(), ours.iterations, theirs.iterations);
}

TEST(MpiBelos, CgAndGmresLikeBelosOnTheCrsMatrix) {
  expect_same_belos_solve("cg", generated("stencil27:n=12"), 1, 1e-8);
  expect_same_belos_solve("cg", generated("stencil7:n=14"), 2, 1e-9);
  expect_same_belos_solve("gmres", convection_diffusion(14, 0.4), 1, 1e-8);
}

// Weak scaling: each rank builds its own block of about n^3 rows of a larger stencil27.
TEST(MpiOperator, WeakScalingStencilKeepsTheRowsPerRank) {
  const int ranks = comm()->getSize();
  const std::string spec = tools::weak_stencil27(8, ranks);
  const auto a = generated(spec);
  const double per_rank = double(a->getGlobalNumRows()) / ranks;
  EXPECT_NEAR(per_rank / 512, 1.0, 0.2) << spec;
  EXPECT_LE(apply_error(spec, 1, 1, 0), kTol) << spec;
}

}  // namespace
}  // namespace kspmv::test

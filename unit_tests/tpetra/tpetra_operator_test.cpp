// kspmv::TpetraOperator against Tpetra::CrsMatrix::apply on the same distributed matrix: every
// mode, scaling and number of vectors, Import and Export, views, aliasing, value refresh, errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/registry.hpp"
#include "tpetra_test.hpp"

namespace kspmv::test {
namespace {

constexpr double kTol = 1e-12;  // double, against Tpetra's own SpMV (docs/DESIGN.md "Measuring")

// Square (symmetric and not), rectangular (domain map != range map), scattered columns, long rows.
const std::vector<std::string> kSpecs = {
    "stencil7:n=9",   "uniform:rows=700,k=5", "uniform:rows=400,k=4,cols=260",
    "kmer:rows=3000", "fullchip:rows=1500",   "laplace2d:n=20+longrows:count=2,len=300"};

TEST(TpetraOperator, ApplyMatchesTheCrsMatrixInEveryModeScalingAndVectorCount) {
  for (const auto& spec : kSpecs) {
    const auto a = generated(spec);
    const TpetraOperator<double> op(a);
    for (const auto mode : {Teuchos::NO_TRANS, Teuchos::TRANS, Teuchos::CONJ_TRANS})
      for (const std::size_t k : {1, 3})
        for (const auto& [alpha, beta] :
             std::vector<std::pair<double, double>>{{1, 0}, {-0.5, 2}, {2, 1}, {0, 0.5}, {0, 0}})
          EXPECT_LE(apply_error(op, *a, k, mode, alpha, beta), kTol)
              << spec << " mode " << mode << " k " << k << " alpha " << alpha << " beta " << beta;
  }
}

TEST(TpetraOperator, EveryHostKernelRunsTheLocalBlock) {
  const auto a = generated("uniform:rows=900,k=6");
  for (const KernelInfo& row : kernels_of(Backend::Host)) {
    Options options;
    options.kernel = row.kernel;
    const TpetraOperator<double> op(a, options);
    EXPECT_EQ(op.local().kernel(), row.kernel);
    EXPECT_LE(apply_error(op, *a, 2, Teuchos::NO_TRANS, 1, 0), kTol) << to_string(row.kernel);
    EXPECT_LE(apply_error(op, *a, 2, Teuchos::TRANS, 0.5, -1), kTol) << to_string(row.kernel);
  }
}

// A range map other than the row map (all rows' results gathered on rank 0) and a domain map
// other than the column map's owned part (the columns split the other way round): Tpetra builds
// an Export and an Import, and the operator uses both, forwards and backwards.
TEST(TpetraOperator, ExportWhereTheRangeMapIsNotTheRowMap) {
  const auto c = comm();
  const std::string spec = "stencil27:n=7";
  const Ordinal m = gen::spec_rows(spec);
  const auto starts = uniform_row_starts(m, c->getSize());
  const int r = c->getRank(), last = c->getSize() - 1;
  const auto rows = gen::from_spec<double>(
      spec, {static_cast<Ordinal>(starts[r]), static_cast<Ordinal>(starts[r + 1])});
  const auto range = Teuchos::rcp(new Map(m, r == 0 ? m : 0, 0, c));
  const auto domain = Teuchos::rcp(
      new Map(m, static_cast<std::size_t>(starts[last - r + 1] - starts[last - r]), 0, c));
  const auto a = tpetra_matrix_from_rows(c, m, rows, domain, range);
  EXPECT_EQ(a->getGraph()->getExporter().is_null(), c->getSize() == 1);
  const TpetraOperator<double> op(a);
  EXPECT_TRUE(op.getRangeMap()->isSameAs(*range));
  EXPECT_TRUE(op.getDomainMap()->isSameAs(*domain));
  for (const auto mode : {Teuchos::NO_TRANS, Teuchos::TRANS})
    for (const auto& [alpha, beta] : std::vector<std::pair<double, double>>{{1, 0}, {-2, 0.5}})
      EXPECT_LE(apply_error(op, *a, 2, mode, alpha, beta), kTol) << mode;
}

TEST(TpetraOperator, ColumnsOfOtherMultiVectorsWithoutConstantStride) {
  const auto a = generated("uniform:rows=500,k=7");
  const TpetraOperator<double> op(a);
  const auto x4 = tools::random_vectors(a->getDomainMap(), 4, 3);
  const auto y4 = tools::random_vectors(a->getRangeMap(), 4, 4);
  const std::vector<std::size_t> xcols = {0, 2}, ycols = {3, 1};
  const auto x = x4->subView(Teuchos::ArrayView<const std::size_t>(xcols));
  ASSERT_FALSE(x->isConstantStride());
  TpetraVectors expected(*y4, Teuchos::Copy);
  const auto y = y4->subViewNonConst(Teuchos::ArrayView<const std::size_t>(ycols));
  a->apply(*x, *expected.subViewNonConst(Teuchos::ArrayView<const std::size_t>(ycols)),
           Teuchos::NO_TRANS, 1.5, -1);
  op.apply(*x, *y, Teuchos::NO_TRANS, 1.5, -1);
  EXPECT_LE(tools::max_relative_error(*y4, expected), kTol);  // columns 0 and 2 of Y untouched
}

TEST(TpetraOperator, XAndYTheSameMultiVector) {
  const auto a = generated("stencil7:n=8");
  const TpetraOperator<double> op(a);
  for (const auto mode : {Teuchos::NO_TRANS, Teuchos::TRANS}) {
    const auto v = tools::random_vectors(a->getDomainMap(), 2, 5);
    TpetraVectors x(*v, Teuchos::Copy), expected(*v, Teuchos::Copy);
    a->apply(x, expected, mode, 1, 0.5);
    op.apply(*v, *v, mode, 1, 0.5);
    EXPECT_LE(tools::max_relative_error(*v, expected), kTol) << mode;
  }
}

// New values for the same graph (the matrix changed in place) reach every host kernel through
// refresh_values, whose plans stay: the kernel Auto chose included. (Autotune is a CUDA option:
// the host backend refuses it.)
TEST(TpetraOperator, RefreshedValuesKeepThePlans) {
  const auto a = generated("fullchip:rows=2000");
  std::vector<Options> all(1);
  for (const KernelInfo& row : kernels_of(Backend::Host)) all.emplace_back().kernel = row.kernel;
  for (const Options& options : all) {
    TpetraOperator<double> op(a, options);
    for (int i = 0; i < 8; ++i) EXPECT_LE(apply_error(op, *a, 1, Teuchos::NO_TRANS, 1, 0), kTol);
    const Kernel kept = op.local().kernel();
    a->resumeFill();
    for (std::size_t i = 0; i < local_count(*a->getRowMap()); ++i) {
      typename TpetraMatrix::local_inds_host_view_type cols;
      typename TpetraMatrix::values_host_view_type vals;
      a->getLocalRowView(static_cast<int>(i), cols, vals);
      std::vector<double> changed(vals.data(), vals.data() + vals.extent(0));
      for (auto& v : changed) v = 0.25 - 3 * v;
      a->replaceLocalValues(static_cast<int>(i),
                            Teuchos::ArrayView<const int>(cols.data(), cols.extent(0)),
                            Teuchos::ArrayView<const double>(changed));
    }
    a->fillComplete(a->getDomainMap(), a->getRangeMap());
    op.refresh_values();
    EXPECT_EQ(op.local().kernel(), kept);
    for (const auto mode : {Teuchos::NO_TRANS, Teuchos::TRANS})
      EXPECT_LE(apply_error(op, *a, 2, mode, 1, 0), kTol) << to_string(kept) << " " << mode;
  }
}

// More ranks than rows: a rank without rows holds an empty block.
TEST(TpetraOperator, RanksWithoutRows) {
  const auto a = generated("uniform:rows=3,k=2");
  const TpetraOperator<double> op(a);
  for (const auto mode : {Teuchos::NO_TRANS, Teuchos::TRANS})
    EXPECT_LE(apply_error(op, *a, 2, mode, 1, 0), kTol) << mode;
}

TEST(TpetraOperator, MapsTransposeAndDescription) {
  const auto a = generated("uniform:rows=300,k=3,cols=200");
  const TpetraOperator<double> op(a);
  EXPECT_TRUE(op.getDomainMap()->isSameAs(*a->getDomainMap()));
  EXPECT_TRUE(op.getRangeMap()->isSameAs(*a->getRangeMap()));
  EXPECT_EQ(op.getDomainMap()->getGlobalNumElements(), 200u);
  EXPECT_TRUE(op.hasTransposeApply());
  EXPECT_NE(op.description().find("kspmv::TpetraOperator (host kernel"), std::string::npos)
      << op.description();
}

TEST(TpetraOperator, BadArgumentsThrowOnEveryRankBeforeAnyMessage) {
  const auto a = generated("uniform:rows=300,k=3,cols=200");
  EXPECT_THROW(TpetraOperator<double>{Teuchos::null}, InvalidArgument);
  const auto open = Teuchos::rcp(new TpetraMatrix(a->getRowMap(), 1));
  EXPECT_THROW(TpetraOperator<double>{open}, InvalidArgument);  // not fill complete
  const TpetraOperator<double> op(a);
  const auto x = tools::random_vectors(a->getDomainMap(), 2, 1);
  auto y = tools::random_vectors(a->getRangeMap(), 3, 2);
  EXPECT_THROW(op.apply(*x, *y), InvalidArgument);  // 2 vectors into 3
  y = tools::random_vectors(a->getDomainMap(), 2, 2);
  EXPECT_THROW(op.apply(*x, *y), InvalidArgument);  // y on the domain map: 300 vs 200 rows
  // The operator still works after refusing.
  EXPECT_LE(apply_error(op, *a, 1, Teuchos::NO_TRANS, 1, 0), kTol);
}

TEST(TpetraOperator, NodeLocalRankIsTheLaunchersOne) {
  const auto c = comm();
  const int local = node_local_rank(*c);
  EXPECT_GE(local, 0);
  EXPECT_LT(local, c->getSize());
  if (const char* env = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) EXPECT_EQ(local, std::atoi(env));
  EXPECT_EQ(device_for_rank(*c, {4, 7}), local % 2 == 0 ? 4 : 7);
  EXPECT_THROW(device_for_rank(*c, {}), UnsupportedError);
}

// On a machine with a GPU: each rank's block on its node-local device, every CUDA kernel of the
// registry, checked against Tpetra's host SpMV.
TEST(TpetraOperator, CudaBackendOnTheNodeLocalDevice) {
  const int gpus = cuda_device_count();
  if (gpus == 0) GTEST_SKIP() << "no CUDA device";
  const auto a = generated("uniform:rows=5000,k=9");
  for (const KernelInfo& row : kernels_of(Backend::Cuda)) {
    Options options;
    options.backend = Backend::Cuda;
    options.kernel = row.kernel;
    options.residency = row.residency;
    options.devices = {kAllDevices};
    const TpetraOperator<double> op(a, options);
    EXPECT_EQ(op.local().options().devices.at(0), node_local_rank(*comm()) % gpus);
    for (const auto mode : {Teuchos::NO_TRANS, Teuchos::TRANS})
      EXPECT_LE(apply_error(op, *a, 3, mode, 1, 0.5), kTol) << to_string(row.kernel) << " " << mode;
  }
}

}  // namespace
}  // namespace kspmv::test

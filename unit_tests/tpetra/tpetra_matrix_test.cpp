// Distributed matrices: each rank's generated block, a file read on rank 0 and spread by rows or
// non-zeros; checked against the serial reference SpMV of the whole matrix on rank 0.
#include <gtest/gtest.h>

#include <Teuchos_CommHelpers.hpp>
#include <Tpetra_Import.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "testing/reference.hpp"
#include "tpetra_test.hpp"

namespace kspmv::test {
namespace {

// The entries of v, all on rank 0 (empty elsewhere). Collective.
std::vector<double> on_root(const TpetraVectors& v) {
  const auto map = v.getMap();
  const bool root = map->getComm()->getRank() == 0;
  const auto all = Teuchos::rcp(new Map(map->getGlobalNumElements(),
                                        root ? map->getGlobalNumElements() : 0, 0, map->getComm()));
  TpetraVectors gathered(all, 1);
  gathered.doImport(v, Tpetra::Import<>(map, all), Tpetra::INSERT);
  const auto view = gathered.getLocalViewHost(Tpetra::Access::ReadOnly);
  return std::vector<double>(view.data(), view.data() + view.extent(0));
}

// y = A x with the distributed matrix against reference::spmv of `whole` on rank 0: the relative
// error, the same on every rank. Collective.
double error_against_whole(const TpetraMatrix& a, const CsrMatrix<double>& whole) {
  const auto x = tools::random_vectors(a.getDomainMap(), 1, 31);
  TpetraVectors y(a.getRangeMap(), 1);
  a.apply(*x, y);
  const std::vector<double> xs = on_root(*x), ys = on_root(y);
  double error = 0;
  if (a.getComm()->getRank() == 0) {
    std::vector<double> ref(whole.nrows);
    reference::spmv(1.0, whole, xs.data(), 0.0, ref.data());
    error = reference::rel_l2_error(ys.data(), ref.data(), ref.size());
  }
  Teuchos::broadcast(*a.getComm(), 0, 1, &error);
  return error;
}

// The local row counts of a's row map are those of the split `starts`.
void expect_rows(const TpetraMatrix& a, const std::vector<TpetraGlobal>& starts) {
  const int r = a.getComm()->getRank();
  EXPECT_EQ(static_cast<TpetraGlobal>(local_count(*a.getRowMap())), starts[r + 1] - starts[r]);
  EXPECT_EQ(a.getRowMap()->getMinGlobalIndex(), starts[r]);
}

const std::vector<std::string> kSpecs = {
    "laplace2d:nx=31,ny=17", "stencil27:n=8",      "uniform:rows=600,k=4,cols=450",
    "kron:scale=9,ef=4",     "rgg:scale=9",        "kmer:rows=2500",
    "banded:n=400,bw=6",     "fullchip:rows=1200", "stencil7:n=6+longrows:count=3,len=150"};

TEST(TpetraMatrix, GeneratedBlocksAreTheRowsOfTheWholeMatrix) {
  for (const auto& spec : kSpecs) {
    const auto whole = gen::from_spec<double>(spec);
    const auto a = generated(spec);
    EXPECT_EQ(a->getGlobalNumRows(), static_cast<std::size_t>(whole.nrows)) << spec;
    EXPECT_EQ(a->getDomainMap()->getGlobalNumElements(), static_cast<std::size_t>(whole.ncols));
    EXPECT_EQ(a->getGlobalNumEntries(), static_cast<std::size_t>(whole.nnz())) << spec;
    expect_rows(*a, uniform_row_starts(whole.nrows, comm()->getSize()));
    EXPECT_LE(error_against_whole(*a, whole), 1e-12) << spec;
  }
}

TEST(TpetraMatrix, RootsMatrixSpreadByRowsOrNonZeros) {
  const int ranks = comm()->getSize(), r = comm()->getRank();
  for (const auto& spec : kSpecs) {
    // Only rank 0's matrix is read: the others pass an empty one.
    const auto whole = gen::from_spec<double>(spec);
    const CsrMatrix<double> mine = r == 0 ? whole : CsrMatrix<double>();
    for (const auto& starts :
         {uniform_row_starts(whole.nrows, ranks), nz_row_starts(whole.row_ptr, ranks)}) {
      const auto a = distribute(mine, comm(), r == 0 ? starts : std::vector<TpetraGlobal>{});
      expect_rows(*a, starts);
      EXPECT_EQ(a->getGlobalNumEntries(), static_cast<std::size_t>(whole.nnz())) << spec;
      EXPECT_LE(error_against_whole(*a, whole), 1e-12) << spec;
    }
    const auto by_default = distribute(mine, comm());  // equal rows
    expect_rows(*by_default, uniform_row_starts(whole.nrows, ranks));
  }
}

TEST(TpetraMatrix, NzSplitBalancesTheNonZeros) {
  const auto a = gen::from_spec<double>("fullchip:rows=5000");  // rows up to 3846 entries
  Offset longest = 0;
  for (Ordinal i = 0; i < a.nrows; ++i) longest = std::max(longest, a.row_length(i));
  for (int ranks : {1, 2, 3, 4, 7}) {
    const auto starts = nz_row_starts(a.row_ptr, ranks);
    ASSERT_EQ(starts.size(), static_cast<std::size_t>(ranks) + 1);
    EXPECT_EQ(starts.front(), 0);
    EXPECT_EQ(starts.back(), a.nrows);
    for (int p = 0; p < ranks; ++p)
      EXPECT_LE(a.row_ptr(starts[p + 1]) - a.row_ptr(starts[p]),
                (a.nnz() + ranks - 1) / ranks + longest);
  }
  EXPECT_EQ(uniform_row_starts(10, 4), (std::vector<TpetraGlobal>{0, 3, 6, 8, 10}));
  EXPECT_EQ(uniform_row_starts(2, 4), (std::vector<TpetraGlobal>{0, 1, 2, 2, 2}));
}

// A Matrix Market file read on rank 0 only (load_distributed, as `kspmv cg --tpetra`); a missing
// file is an error on every rank, not a rank left waiting.
TEST(TpetraMatrix, FileReadOnRootOnly) {
  const auto c = comm();
  // One file per rank count: ctest runs the 1-, 2- and 4-rank tests at the same time.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kspmv_tpetra_matrix_test_np" + std::to_string(c->getSize()) + ".mtx"))
                               .string();
  const auto whole = gen::from_spec<double>("uniform:rows=300,k=5");
  if (c->getRank() == 0) io::write_matrix_market(path, whole);
  c->barrier();
  for (const std::string split : {"rows", "nz"}) {
    const auto a = tools::load_distributed(path, c, split);
    EXPECT_LE(error_against_whole(*a, whole), 1e-12) << split;
  }
  c->barrier();
  if (c->getRank() == 0) std::filesystem::remove(path);
  EXPECT_THROW(tools::load_distributed(path + ".missing", c), Error);
  EXPECT_THROW(tools::load_distributed("gen:uniform:rows=30", c), InvalidArgument);  // no k=
  EXPECT_THROW(tools::load_distributed("gen:stencil7:n=4", c, "nz"), InvalidArgument);
}

TEST(TpetraMatrix, BlocksThatDoNotAddUpThrowOnEveryRank) {
  const auto c = comm();
  const auto rows = gen::from_spec<double>("uniform:rows=40,k=3", {0, 10});  // 10 rows a rank
  EXPECT_THROW(tpetra_matrix_from_rows(c, 10 * c->getSize() + 1, rows), InvalidArgument);
  const auto whole = gen::from_spec<double>("uniform:rows=40,k=3");
  const int ranks = c->getSize();
  EXPECT_THROW(distribute(whole, c, uniform_row_starts(40, ranks + 1)), InvalidArgument);
  EXPECT_THROW(distribute(whole, c, uniform_row_starts(41, ranks)), InvalidArgument);
  EXPECT_THROW(distribute(whole, c, {}, c->getSize()), InvalidArgument);  // no such root
}

}  // namespace
}  // namespace kspmv::test

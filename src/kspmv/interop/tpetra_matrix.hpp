// Distributed matrices for the Tpetra adapter: a Tpetra::CrsMatrix from kspmv CSR rows, built by
// each rank from its own rows or spread from one rank (a file read once) by Tpetra's Export.
#pragma once

#include <TpetraCore_config.h>
#include <Teuchos_Comm.hpp>
#include <Teuchos_RCP.hpp>
#include <Tpetra_CrsMatrix_decl.hpp>
#include <cstddef>
#include <vector>

#include "kspmv/formats/csr.hpp"
#include "kspmv/gen/detail.hpp"

// KSPMV_TPETRA_SCALARS(M): M(S) for each scalar S the Tpetra build instantiates among double and
// float (explicit instantiations of the adapter's templates).
#ifdef HAVE_TPETRA_INST_DOUBLE
#define KSPMV_TPETRA_DOUBLE(M) M(double)
#else
#define KSPMV_TPETRA_DOUBLE(M)
#endif
#ifdef HAVE_TPETRA_INST_FLOAT
#define KSPMV_TPETRA_FLOAT(M) M(float)
#else
#define KSPMV_TPETRA_FLOAT(M)
#endif
#define KSPMV_TPETRA_SCALARS(M) KSPMV_TPETRA_DOUBLE(M) KSPMV_TPETRA_FLOAT(M)

namespace kspmv {

// The number of indices of `map` on this rank: getLocalNumElements from Trilinos 13.4 on, which
// removed its former name getNodeNumElements later (Trilinos 14).
// Asked of the Map itself, not of Trilinos_version.h, which only Debian's trilinos-dev has.
template <class Map>
auto local_count(const Map& map) -> decltype(std::size_t(map.getLocalNumElements())) {
  return map.getLocalNumElements();
}
template <class Map, class... Older>
std::size_t local_count(const Map& map, Older...) {
  return map.getNodeNumElements();
}

// Global indices of Tpetra's default maps (those of Tpetra::Operator<Scalar>).
using TpetraGlobal = Tpetra::Map<>::global_ordinal_type;

// The first row of each of `ranks` contiguous blocks of `rows` rows, equal to within one
// (Tpetra's uniform contiguous map), and `rows` last: ranks + 1 entries.
std::vector<TpetraGlobal> uniform_row_starts(TpetraGlobal rows, int ranks);

// The same split with about equal non-zeros per block (kspmv's NZ partitioner, Gao et al. 2024
// §3.1) for the matrix whose row pointer is row_ptr (rows + 1 entries).
std::vector<TpetraGlobal> nz_row_starts(const HostView<Offset>& row_ptr, int ranks);

// Entry (global index g, column j) of k random vectors, uniform in [-1, 1) from (seed, g, j):
// the same vectors on any number of ranks.
template <class Scalar>
Scalar random_entry(std::uint64_t seed, TpetraGlobal g, std::size_t j) {
  return static_cast<Scalar>(
      2 * gen::detail::unit(gen::detail::hash(seed, static_cast<std::uint64_t>(g), j)) - 1);
}

using TpetraMapPtr = Teuchos::RCP<const Tpetra::Map<>>;

// A fill-complete Tpetra::CrsMatrix on `comm` from each rank's rows, in rank order: `rows` holds
// this rank's block of consecutive rows of a global_rows x rows.ncols matrix, with global column
// indices (rows.ncols equal on every rank). Row map: these blocks. Domain and range maps: as
// given, or by default the row map (range; domain when the matrix is square) or the columns
// split by uniform_row_starts (domain of a rectangular matrix). Collective. Throws
// InvalidArgument (on every rank) when the blocks do not add up to global_rows rows of one width.
template <class Scalar>
Teuchos::RCP<Tpetra::CrsMatrix<Scalar>> tpetra_matrix_from_rows(
    const Teuchos::RCP<const Teuchos::Comm<int>>& comm, TpetraGlobal global_rows,
    const CsrMatrix<Scalar>& rows, TpetraMapPtr domain_map = {}, TpetraMapPtr range_map = {});

// The matrix `a` held by rank `root` (the other ranks' `a` is not read) spread over the ranks of
// `comm` by Tpetra's Export: rank r receives rows [row_starts[r], row_starts[r + 1]) (row_starts
// as root gives them, ranks + 1 entries; empty: uniform_row_starts). Collective; the maps are
// those of tpetra_matrix_from_rows.
template <class Scalar>
Teuchos::RCP<Tpetra::CrsMatrix<Scalar>> distribute(
    const CsrMatrix<Scalar>& a, const Teuchos::RCP<const Teuchos::Comm<int>>& comm,
    std::vector<TpetraGlobal> row_starts = {}, int root = 0);

#ifdef HAVE_TPETRA_INST_DOUBLE
extern template Teuchos::RCP<Tpetra::CrsMatrix<double>> tpetra_matrix_from_rows(
    const Teuchos::RCP<const Teuchos::Comm<int>>&, TpetraGlobal, const CsrMatrix<double>&,
    TpetraMapPtr, TpetraMapPtr);
extern template Teuchos::RCP<Tpetra::CrsMatrix<double>> distribute(
    const CsrMatrix<double>&, const Teuchos::RCP<const Teuchos::Comm<int>>&,
    std::vector<TpetraGlobal>, int);
#endif
#ifdef HAVE_TPETRA_INST_FLOAT
extern template Teuchos::RCP<Tpetra::CrsMatrix<float>> tpetra_matrix_from_rows(
    const Teuchos::RCP<const Teuchos::Comm<int>>&, TpetraGlobal, const CsrMatrix<float>&,
    TpetraMapPtr, TpetraMapPtr);
extern template Teuchos::RCP<Tpetra::CrsMatrix<float>> distribute(
    const CsrMatrix<float>&, const Teuchos::RCP<const Teuchos::Comm<int>>&,
    std::vector<TpetraGlobal>, int);
#endif

}  // namespace kspmv

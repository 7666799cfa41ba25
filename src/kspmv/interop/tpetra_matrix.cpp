// Tpetra::CrsMatrix from kspmv CSR rows, per rank or spread from one rank.
#include "kspmv/interop/tpetra_matrix.hpp"

#include <Teuchos_CommHelpers.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Export.hpp>
#include <algorithm>
#include <string>

#include "kspmv/core/error.hpp"
#include "partitioners/partition_plan.hpp"

namespace kspmv {

namespace {
using Map = Tpetra::Map<>;

// This rank's rows (or columns) as a contiguous map of `global` indices, `local` of them here.
Teuchos::RCP<const Map> contiguous(const Teuchos::RCP<const Teuchos::Comm<int>>& comm,
                                   TpetraGlobal global, std::size_t local) {
  return Teuchos::rcp(new Map(static_cast<Tpetra::global_size_t>(global), local, 0, comm));
}

// The domain map of a global_rows x ncols matrix with this row map.
Teuchos::RCP<const Map> default_domain_map(const Teuchos::RCP<const Map>& row_map,
                                           TpetraGlobal ncols) {
  if (static_cast<TpetraGlobal>(row_map->getGlobalNumElements()) == ncols) return row_map;
  const auto comm = row_map->getComm();
  const auto starts = uniform_row_starts(ncols, comm->getSize());
  const int r = comm->getRank();
  return contiguous(comm, ncols, static_cast<std::size_t>(starts[r + 1] - starts[r]));
}
}  // namespace

std::vector<TpetraGlobal> uniform_row_starts(TpetraGlobal rows, int ranks) {
  if (ranks < 1 || rows < 0)
    throw InvalidArgument("uniform_row_starts: needs ranks >= 1, rows >= 0");
  std::vector<TpetraGlobal> starts(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) {  // the first rows % ranks blocks hold one row more
    const TpetraGlobal base = rows / ranks, extra = rows % ranks;
    starts[r] = r * base + std::min<TpetraGlobal>(r, extra);
  }
  return starts;
}

std::vector<TpetraGlobal> nz_row_starts(const HostView<Offset>& row_ptr, int ranks) {
  if (ranks < 1 || row_ptr.extent(0) == 0)
    throw InvalidArgument("nz_row_starts: needs ranks >= 1 and a row pointer");
  const auto m = static_cast<Ordinal>(row_ptr.extent(0) - 1);
  const std::vector<Ordinal> b = part::split_nz(row_ptr.data(), 0, m, ranks);
  return {b.begin(), b.end()};
}

template <class Scalar>
Teuchos::RCP<Tpetra::CrsMatrix<Scalar>> tpetra_matrix_from_rows(
    const Teuchos::RCP<const Teuchos::Comm<int>>& comm, TpetraGlobal global_rows,
    const CsrMatrix<Scalar>& rows, TpetraMapPtr domain_map, TpetraMapPtr range_map) {
  using Matrix = Tpetra::CrsMatrix<Scalar>;
  TpetraGlobal sum = 0, mine = rows.nrows, ncols_min = 0, ncols_max = 0;
  const TpetraGlobal ncols = rows.ncols;
  Teuchos::reduceAll(*comm, Teuchos::REDUCE_SUM, mine, Teuchos::outArg(sum));
  Teuchos::reduceAll(*comm, Teuchos::REDUCE_MIN, ncols, Teuchos::outArg(ncols_min));
  Teuchos::reduceAll(*comm, Teuchos::REDUCE_MAX, ncols, Teuchos::outArg(ncols_max));
  if (sum != global_rows || ncols_min != ncols_max)
    throw InvalidArgument("tpetra_matrix_from_rows: the ranks hold " + std::to_string(sum) +
                          " rows of " + std::to_string(ncols_min) + " to " +
                          std::to_string(ncols_max) + " columns, not " +
                          std::to_string(global_rows) + " rows of one width");
  const auto row_map = contiguous(comm, global_rows, static_cast<std::size_t>(rows.nrows));
  std::vector<std::size_t> lengths(static_cast<std::size_t>(rows.nrows));
  for (Ordinal i = 0; i < rows.nrows; ++i)
    lengths[i] = static_cast<std::size_t>(rows.row_length(i));
  auto a = Teuchos::rcp(new Matrix(row_map, Teuchos::ArrayView<const std::size_t>(lengths)));
  const TpetraGlobal first = row_map->getMinGlobalIndex();
  std::vector<TpetraGlobal> cols;
  for (Ordinal i = 0; i < rows.nrows; ++i) {
    const Offset b = rows.row_ptr(i), len = rows.row_length(i);
    cols.assign(rows.col_idx.data() + b, rows.col_idx.data() + b + len);
    a->insertGlobalValues(first + i, Teuchos::ArrayView<const TpetraGlobal>(cols),
                          Teuchos::ArrayView<const Scalar>(rows.values.data() + b, len));
  }
  a->fillComplete(domain_map.is_null() ? default_domain_map(row_map, ncols) : domain_map,
                  range_map.is_null() ? row_map : range_map);
  return a;
}

template <class Scalar>
Teuchos::RCP<Tpetra::CrsMatrix<Scalar>> distribute(
    const CsrMatrix<Scalar>& a, const Teuchos::RCP<const Teuchos::Comm<int>>& comm,
    std::vector<TpetraGlobal> row_starts, int root) {
  using Matrix = Tpetra::CrsMatrix<Scalar>;
  const int ranks = comm->getSize(), rank = comm->getRank();
  if (root < 0 || root >= ranks)
    throw InvalidArgument("distribute: no rank " + std::to_string(root));
  // Sizes and the split as root has them.
  TpetraGlobal size[3] = {a.nrows, a.ncols, static_cast<TpetraGlobal>(row_starts.size())};
  Teuchos::broadcast(*comm, root, 3, size);
  if (size[2] == 0) {
    row_starts = uniform_row_starts(size[0], ranks);
  } else {
    if (size[2] != ranks + 1 ||
        (rank == root && (row_starts.front() != 0 || row_starts.back() != size[0] ||
                          !std::is_sorted(row_starts.begin(), row_starts.end()))))
      size[2] = -1;
    Teuchos::broadcast(*comm, root, 1, &size[2]);
    if (size[2] < 0)
      throw InvalidArgument("distribute: row_starts must rise from 0 to the row count in " +
                            std::to_string(ranks + 1) + " entries");
    row_starts.resize(static_cast<std::size_t>(ranks) + 1);
    Teuchos::broadcast(*comm, root, ranks + 1, row_starts.data());
  }
  // Root's matrix whole on root, its columns already owned as in the result (no domain to move),
  // then Export of its rows to the blocks.
  const auto target_rows =
      contiguous(comm, size[0], static_cast<std::size_t>(row_starts[rank + 1] - row_starts[rank]));
  const auto target_domain = default_domain_map(target_rows, size[1]);
  CsrMatrix<Scalar> none(0, static_cast<Ordinal>(size[1]), 0);
  const auto source =
      tpetra_matrix_from_rows(comm, size[0], rank == root ? a : none, target_domain);
  const Tpetra::Export<> exporter(source->getRowMap(), target_rows);
  return Tpetra::exportAndFillCompleteCrsMatrix<Matrix>(Teuchos::RCP<const Matrix>(source),
                                                        exporter, target_domain, target_rows);
}

#define KSPMV_INSTANTIATE(S)                                                            \
  template Teuchos::RCP<Tpetra::CrsMatrix<S>> tpetra_matrix_from_rows(                  \
      const Teuchos::RCP<const Teuchos::Comm<int>>&, TpetraGlobal, const CsrMatrix<S>&, \
      TpetraMapPtr, TpetraMapPtr);                                                      \
  template Teuchos::RCP<Tpetra::CrsMatrix<S>> distribute(                               \
      const CsrMatrix<S>&, const Teuchos::RCP<const Teuchos::Comm<int>>&,               \
      std::vector<TpetraGlobal>, int);
KSPMV_TPETRA_SCALARS(KSPMV_INSTANTIATE)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv

// Compressed sparse row matrix on host Kokkos views: the format every other one is built from.
#pragma once

#include "kspmv/core/kokkos.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

template <class Scalar>
struct CsrMatrix {
  using scalar_type = Scalar;

  Ordinal nrows = 0;
  Ordinal ncols = 0;
  HostView<Offset> row_ptr;   // nrows + 1 entries, row_ptr(0) == 0
  HostView<Ordinal> col_idx;  // nnz entries
  HostView<Scalar> values;    // nnz entries

  // An empty shell: allocates nothing, so it may exist before Kokkos is initialized.
  CsrMatrix() = default;
  // Allocates row_ptr (row_ptr(0) = 0, the rest unset), col_idx and values for `nnz` entries.
  CsrMatrix(Ordinal m, Ordinal n, Offset nnz);

  Offset nnz() const { return row_ptr.extent(0) > 0 ? row_ptr(nrows) : 0; }
  Offset row_length(Ordinal i) const { return row_ptr(i + 1) - row_ptr(i); }

  // Throws InvalidArgument unless sizes agree, row_ptr is non-decreasing from 0 and every
  // column index is in [0, ncols).
  void validate() const;
  // True when the columns of every row are strictly increasing (sorted, no duplicates).
  bool is_sorted_unique() const;
};

extern template struct CsrMatrix<float>;
extern template struct CsrMatrix<double>;

}  // namespace kspmv

// Compressed sparse column matrix on host Kokkos views.
#pragma once

#include "kspmv/core/kokkos.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

template <class Scalar>
struct CscMatrix {
  using scalar_type = Scalar;

  Ordinal nrows = 0;
  Ordinal ncols = 0;
  HostView<Offset> col_ptr;   // ncols + 1 entries
  HostView<Ordinal> row_idx;  // nnz entries
  HostView<Scalar> values;    // nnz entries

  CscMatrix() = default;
  CscMatrix(Ordinal m, Ordinal n, Offset nnz);

  Offset nnz() const { return col_ptr.extent(0) > 0 ? col_ptr(ncols) : 0; }
};

extern template struct CscMatrix<float>;
extern template struct CscMatrix<double>;

}  // namespace kspmv

// Coordinate (triplet) matrix on host Kokkos views; entries may be unsorted and repeated.
#pragma once

#include "kspmv/core/kokkos.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

template <class Scalar>
struct CooMatrix {
  using scalar_type = Scalar;

  Ordinal nrows = 0;
  Ordinal ncols = 0;
  HostView<Ordinal> row_idx;
  HostView<Ordinal> col_idx;
  HostView<Scalar> values;

  CooMatrix() = default;
  CooMatrix(Ordinal m, Ordinal n, Offset nnz);

  Offset nnz() const { return static_cast<Offset>(values.extent(0)); }
  // Throws InvalidArgument unless the three arrays agree and every index is in range.
  void validate() const;
};

extern template struct CooMatrix<float>;
extern template struct CooMatrix<double>;

}  // namespace kspmv

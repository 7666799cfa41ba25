// The host (Kokkos) SpMV kernels on the host formats: the portable kernels of space_spmv.hpp on
// the default host execution space, reading the formats' host Views in place.
// Semantics are cuSPARSE's: beta == 0 overwrites y (NaN included); alpha == 0 leaves A unread.
// x and y are host arrays of ncols and nrows entries.
#pragma once

#include "backends/kokkos/space_spmv.hpp"
#include "kspmv/formats/coo.hpp"
#include "kspmv/formats/csc.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv::host {

// A work item per block of rows, a loop per row with four partial sums, sums in double.
template <class S>
void spmv(S alpha, const CsrMatrix<S>& a, const S* x, S beta, S* y);

// Entries in any order (duplicates allowed): A*x is scatter-added into a double array of nrows
// (allocated per call), then y = alpha*(A*x) + beta*y.
template <class S>
void spmv(S alpha, const CooMatrix<S>& a, const S* x, S beta, S* y);

// Parallel over columns, scatter-adding into a double array as the COO kernel does.
template <class S>
void spmv(S alpha, const CscMatrix<S>& a, const S* x, S beta, S* y);

// The arrays of a host format as the portable kernels read them on execution space Exec, whose
// memory must be the host's (the Views are shared, not copied).
template <class Exec, class S>
CsrArrays<Exec, S> arrays_of(const CsrMatrix<S>& a) {
  return {a.row_ptr, a.col_idx, a.values, a.nrows, a.ncols, a.nnz()};
}
template <class Exec, class S>
CooArrays<Exec, S> arrays_of(const CooMatrix<S>& a) {
  return {a.row_idx, a.col_idx, a.values, a.nrows, a.ncols, a.nnz()};
}
template <class Exec, class S>
CscArrays<Exec, S> arrays_of(const CscMatrix<S>& a) {
  return {a.col_ptr, a.row_idx, a.values, a.nrows, a.ncols, a.nnz()};
}

}  // namespace kspmv::host

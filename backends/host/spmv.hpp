// The host (Kokkos) SpMV kernels: y = alpha*A*x + beta*y on the default host execution space.
// Semantics are cuSPARSE's: beta == 0 overwrites y (NaN included); alpha == 0 leaves A unread.
// x and y are host arrays of ncols and nrows entries.
#pragma once

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

}  // namespace kspmv::host

// Host twin of CSR-Partial-Overlap (Zeng & Zou 2023, Alg. 4-6, 9): runs a BatchedCsr with Kokkos
// on the default host execution space, one team per batch with the batch's threads per row as
// the vector length, one team per long row. Same semantics as host::spmv (spmv.hpp).
#pragma once

#include "kspmv/formats/batched_csr.hpp"

namespace kspmv::host {

// y = alpha*A*x + beta*y; beta == 0 overwrites y (NaN included), alpha == 0 leaves A unread.
template <class S>
void spmv(S alpha, const BatchedCsr<S>& a, const S* x, S beta, S* y);

}  // namespace kspmv::host

// Host (Kokkos) twin of the HBP kernel (paper 3, Sec. III-C): blocks run by workers in the
// fixed/competitive split, per-block partial results, then the combine part.
#pragma once

#include "kspmv/formats/hbp.hpp"

namespace kspmv::host {

// y = alpha*A*x + beta*y with cuSPARSE semantics (beta == 0 overwrites y, alpha == 0 reads no A).
// One worker per host thread; sums in double, as the GPU kernel. x holds ncols entries, y nrows.
template <class S>
void spmv(S alpha, const HbpMatrix<S>& a, const S* x, S beta, S* y);

}  // namespace kspmv::host

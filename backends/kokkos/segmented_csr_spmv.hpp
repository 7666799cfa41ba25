// Host (Kokkos) twin of segSpMV / segSpMV-r (paper 5): same padded layout as the CUDA kernel,
// y = alpha*A*x + beta*y with cuSPARSE semantics (beta == 0 overwrites y, alpha == 0 reads no A).
#pragma once

#include "kspmv/formats/segmented_csr.hpp"

namespace kspmv::host {

// Parallel over rows; each row adds the sums of its segments (one sum per segment, as the GPU
// does). x holds ncols entries, y nrows. Serves both Kernel::Seg and Kernel::SegR.
template <class S>
void spmv(S alpha, const SegmentedCsr<S>& a, const S* x, S beta, S* y);

}  // namespace kspmv::host

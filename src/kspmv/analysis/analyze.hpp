// Row statistics (row_stats.hpp) of Views and CSR matrices.
#pragma once

#include "kspmv/analysis/row_stats.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv::analysis {

// Statistics from row_ptr alone (R from the row-length distribution).
RowStats analyze(const HostView<Offset>& row_ptr, Ordinal ncols);
// Statistics of a CSR matrix (R from the column counts, as MSREP defines it). Throws
// InvalidArgument for a column index outside [0, ncols).
template <class S>
RowStats analyze(const CsrMatrix<S>& a);

// power_law_exponent of a pointer View (its extent - 1 counts).
double power_law_exponent(const HostView<Offset>& ptr);

}  // namespace kspmv::analysis

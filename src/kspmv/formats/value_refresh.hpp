// Value refresh on a fixed pattern (every Newton or time step): new values, given in the CSR
// order of the matrix a host format was built from, put in place of the format's, with its
// structure and plans (batches, segments, HBP's blocks and row order) kept. What each format
// needs and holds:
//   CsrMatrix, BatchedCsr: they share the source's Views; the first refresh gives them values
//     of their own (nnz scalars) so that the caller's array is never written; row_ptr and
//     col_idx stay shared.
//   CooMatrix: its entries are in the CSR's order: a copy into its values.
//   CscMatrix, HbpMatrix: a gather through the CSR position of each stored value (csc_order,
//     build_hbp's sources), computed at the first refresh from the source's pattern: nnz Offsets
//     (8 bytes a value) from then on. The HBP format must be one of the hash reordering.
//   SegmentedCsr: its rows refilled from the source's row_ptr (refill_values); no map.
// The source's Views are kept (shared, not copied) until the first refresh (CSC, HBP), and its
// row_ptr for the refresher's life (segmented), as the Operator shares the matrix: it must not
// change meanwhile.
#pragma once

#include <vector>

#include "kspmv/formats/csr.hpp"

namespace kspmv {

template <class Scalar, class Format>
class ValueRefresh {
 public:
  // `source`: the CSR `format` was built from.
  explicit ValueRefresh(const CsrMatrix<Scalar>& source);

  // Puts `csr_values` (source.nnz() entries, read during the call only) in place of the values
  // of `format`, the format built from the source.
  void operator()(Format& format, const Scalar* csr_values);

 private:
  CsrMatrix<Scalar> source_;     // released once no longer needed
  std::vector<Offset> sources_;  // CSC, HBP: the CSR position of each stored value
  bool own_values_ = false;      // CSR, batched: values of their own allocated
};

// out[p] = csr_values[sources[p]] for p < count, in parallel on the host.
template <class Scalar>
void gather_values(const Offset* sources, Offset count, const Scalar* csr_values, Scalar* out);

}  // namespace kspmv

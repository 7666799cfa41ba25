// Segmented CSR (segSpMV, paper 5, Sec. III) on host Kokkos views: every row cut into segments
// of seg_length entries, the last one padded with zeros. Built by seg_plan's functions, which the
// CUDA backend shares.
#pragma once

#include "kspmv/core/kokkos.hpp"
#include "kspmv/formats/csr.hpp"
#include "kspmv/formats/seg_plan.hpp"

namespace kspmv {

template <class Scalar>
struct SegmentedCsr {
  using scalar_type = Scalar;

  Ordinal nrows = 0;
  Ordinal ncols = 0;
  int seg_length = 1;  // a power of two in [1, kMaxSegLength]
  HostView<Offset>
      row_seg_ptr;            // nrows + 1: row i owns segments [row_seg_ptr(i), row_seg_ptr(i+1))
  HostView<Ordinal> col_idx;  // segments * seg_length; padding repeats the row's last column
  HostView<Scalar> values;    // segments * seg_length; padding is 0

  Offset segments() const { return row_seg_ptr.extent(0) > 0 ? row_seg_ptr(nrows) : 0; }
  Offset padded_nnz() const { return segments() * seg_length; }
};

// Builds the segmented layout of `a`; seg_length 0 picks seg_length_min_traffic (seg_plan.hpp).
// Throws InvalidArgument for a seg_length that is not a power of two in [1, kMaxSegLength].
template <class Scalar>
SegmentedCsr<Scalar> to_segmented(const CsrMatrix<Scalar>& a, int seg_length = 0);

// Puts new values in place of s's, keeping its layout (a refresh on the same pattern): `values`
// holds them in the CSR order of `a`, the matrix s was built from (its row_ptr is read, not its
// values or columns). Padding stays 0.
template <class Scalar>
void refill_values(SegmentedCsr<Scalar>& s, const CsrMatrix<Scalar>& a, const Scalar* values);

extern template SegmentedCsr<float> to_segmented(const CsrMatrix<float>&, int);
extern template SegmentedCsr<double> to_segmented(const CsrMatrix<double>&, int);
extern template void refill_values(SegmentedCsr<float>&, const CsrMatrix<float>&, const float*);
extern template void refill_values(SegmentedCsr<double>&, const CsrMatrix<double>&, const double*);

}  // namespace kspmv

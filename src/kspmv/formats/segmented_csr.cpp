// Segmented CSR from CSR (paper 5, Sec. III): sizes first, then rows filled in parallel chunks.
#include "kspmv/formats/segmented_csr.hpp"

#include <algorithm>

namespace kspmv {

namespace {
// Rows one host task fills: enough to amortize scheduling.
constexpr Offset kFillRows = 4096;

// seg_fill over every row of s, in parallel chunks of rows (col null: the values alone).
template <class Scalar>
void fill(const SegmentedCsr<Scalar>& s, const CsrPointers<Scalar>& csr, Ordinal* col,
          Scalar* val) {
  const Ordinal m = s.nrows;
  const int seg_length = s.seg_length;
  const Offset* row_seg_ptr = s.row_seg_ptr.data();
  // Row and chunk arithmetic in Offset: m + kFillRows would wrap an Ordinal near 2^31.
  const Offset chunks = (Offset(m) + kFillRows - 1) / kFillRows;
  // A plain lambda: seg_fill is host code and this runs on the host execution space only.
  Kokkos::parallel_for("kspmv::seg::fill",
                       Kokkos::RangePolicy<HostExecSpace, Kokkos::IndexType<Offset>>(0, chunks),
                       [=](Offset c) {
                         const Offset begin = c * kFillRows;
                         const Offset first = row_seg_ptr[begin] * seg_length;
                         seg_fill(csr, seg_length, row_seg_ptr, static_cast<Ordinal>(begin),
                                  static_cast<Ordinal>(std::min<Offset>(m, begin + kFillRows)),
                                  col ? col + first : nullptr, val + first);
                       });
}
}  // namespace

template <class Scalar>
SegmentedCsr<Scalar> to_segmented(const CsrMatrix<Scalar>& a, int seg_length) {
  const Ordinal m = a.nrows;
  if (seg_length == 0)
    seg_length = seg_length_min_traffic(a.row_ptr.data(), m, int(sizeof(Scalar) + sizeof(Ordinal)));
  const SegSizes sizes = seg_sizes(a.row_ptr.data(), m, seg_length);

  SegmentedCsr<Scalar> s;
  s.nrows = m;
  s.ncols = a.ncols;
  s.seg_length = seg_length;
  s.row_seg_ptr = make_host_view<Offset>("kspmv::seg::row_seg_ptr", std::size_t(m) + 1);
  seg_row_pointers(a.row_ptr.data(), m, seg_length, s.row_seg_ptr.data());
  s.col_idx = make_host_view<Ordinal>("kspmv::seg::col_idx", sizes.padded_nnz);
  s.values = make_host_view<Scalar>("kspmv::seg::values", sizes.padded_nnz);
  fill(s, {a.row_ptr.data(), a.col_idx.data(), a.values.data(), m, a.ncols}, s.col_idx.data(),
       s.values.data());
  return s;
}

template <class Scalar>
void refill_values(SegmentedCsr<Scalar>& s, const CsrMatrix<Scalar>& a, const Scalar* values) {
  fill(s, {a.row_ptr.data(), nullptr, values, a.nrows, a.ncols}, nullptr, s.values.data());
}

template SegmentedCsr<float> to_segmented(const CsrMatrix<float>&, int);
template SegmentedCsr<double> to_segmented(const CsrMatrix<double>&, int);
template void refill_values(SegmentedCsr<float>&, const CsrMatrix<float>&, const float*);
template void refill_values(SegmentedCsr<double>&, const CsrMatrix<double>&, const double*);

}  // namespace kspmv

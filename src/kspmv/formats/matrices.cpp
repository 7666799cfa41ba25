// Allocation and validation of the basic formats.
#include <string>

#include "kspmv/core/error.hpp"
#include "kspmv/formats/coo.hpp"
#include "kspmv/formats/csc.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv {

namespace {
void check_shape(Ordinal m, Ordinal n, Offset nnz) {
  if (m < 0 || n < 0 || nnz < 0) {
    throw InvalidArgument("matrix dimensions must be non-negative (got " + std::to_string(m) +
                          " x " + std::to_string(n) + " with " + std::to_string(nnz) +
                          " non-zeros)");
  }
}

// Shared by CSR and CSC: pointer array of length outer+1 from 0, non-decreasing, ending at nnz,
// and inner indices in [0, inner).
void check_compressed(const char* what, const HostView<Offset>& ptr, Ordinal outer,
                      const HostView<Ordinal>& idx, Ordinal inner, std::size_t nvalues) {
  const std::string w(what);
  if (ptr.extent(0) != static_cast<std::size_t>(outer) + 1)
    throw InvalidArgument(w + ": pointer array has " + std::to_string(ptr.extent(0)) +
                          " entries, expected " + std::to_string(Offset(outer) + 1));
  if (ptr(0) != 0) throw InvalidArgument(w + ": pointer array must start at 0");
  for (Ordinal i = 0; i < outer; ++i) {
    if (ptr(i + 1) < ptr(i))
      throw InvalidArgument(w + ": pointer array decreases at " + std::to_string(i));
  }
  const Offset nnz = ptr(outer);
  if (idx.extent(0) != static_cast<std::size_t>(nnz) || nvalues != static_cast<std::size_t>(nnz))
    throw InvalidArgument(w + ": index/value arrays do not hold nnz = " + std::to_string(nnz) +
                          " entries");
  for (Offset k = 0; k < nnz; ++k) {
    if (idx(k) < 0 || idx(k) >= inner)
      throw InvalidArgument(w + ": index " + std::to_string(idx(k)) + " at position " +
                            std::to_string(k) + " is outside [0, " + std::to_string(inner) + ")");
  }
}
}  // namespace

template <class Scalar>
CsrMatrix<Scalar>::CsrMatrix(Ordinal m, Ordinal n, Offset nnz) : nrows(m), ncols(n) {
  check_shape(m, n, nnz);
  row_ptr = make_host_view<Offset>("kspmv::csr::row_ptr", std::size_t(m) + 1);
  row_ptr(0) = 0;
  col_idx = make_host_view<Ordinal>("kspmv::csr::col_idx", nnz);
  values = make_host_view<Scalar>("kspmv::csr::values", nnz);
}

template <class Scalar>
void CsrMatrix<Scalar>::validate() const {
  check_shape(nrows, ncols, 0);
  check_compressed("CSR", row_ptr, nrows, col_idx, ncols, values.extent(0));
}

template <class Scalar>
bool CsrMatrix<Scalar>::is_sorted_unique() const {
  for (Ordinal i = 0; i < nrows; ++i) {
    for (Offset k = row_ptr(i) + 1; k < row_ptr(i + 1); ++k) {
      if (col_idx(k) <= col_idx(k - 1)) return false;
    }
  }
  return true;
}

template <class Scalar>
CooMatrix<Scalar>::CooMatrix(Ordinal m, Ordinal n, Offset nnz) : nrows(m), ncols(n) {
  check_shape(m, n, nnz);
  row_idx = make_host_view<Ordinal>("kspmv::coo::row_idx", nnz);
  col_idx = make_host_view<Ordinal>("kspmv::coo::col_idx", nnz);
  values = make_host_view<Scalar>("kspmv::coo::values", nnz);
}

template <class Scalar>
void CooMatrix<Scalar>::validate() const {
  check_shape(nrows, ncols, 0);
  const std::size_t nnz = values.extent(0);
  if (row_idx.extent(0) != nnz || col_idx.extent(0) != nnz)
    throw InvalidArgument("COO: row, column and value arrays differ in length");
  for (std::size_t k = 0; k < nnz; ++k) {
    if (row_idx(k) < 0 || row_idx(k) >= nrows || col_idx(k) < 0 || col_idx(k) >= ncols)
      throw InvalidArgument("COO: entry " + std::to_string(k) + " (" + std::to_string(row_idx(k)) +
                            ", " + std::to_string(col_idx(k)) + ") is outside the " +
                            std::to_string(nrows) + " x " + std::to_string(ncols) + " matrix");
  }
}

template <class Scalar>
CscMatrix<Scalar>::CscMatrix(Ordinal m, Ordinal n, Offset nnz) : nrows(m), ncols(n) {
  check_shape(m, n, nnz);
  col_ptr = make_host_view<Offset>("kspmv::csc::col_ptr", std::size_t(n) + 1);
  col_ptr(0) = 0;
  row_idx = make_host_view<Ordinal>("kspmv::csc::row_idx", nnz);
  values = make_host_view<Scalar>("kspmv::csc::values", nnz);
}

template struct CsrMatrix<float>;
template struct CsrMatrix<double>;
template struct CooMatrix<float>;
template struct CooMatrix<double>;
template struct CscMatrix<float>;
template struct CscMatrix<double>;
template struct CsrMatrix<Kokkos::complex<float>>;
template struct CsrMatrix<Kokkos::complex<double>>;
template struct CscMatrix<Kokkos::complex<float>>;
template struct CscMatrix<Kokkos::complex<double>>;

}  // namespace kspmv

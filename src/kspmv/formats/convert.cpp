// Conversions between the basic formats: counting sorts over rows/columns, O(nnz) memory.
#include "kspmv/formats/convert.hpp"

#include <algorithm>
#include <numeric>

namespace kspmv {

namespace {
// Bucket `nnz` entries by `key` (in [0, nkeys)) with a stable counting sort. Returns the bucket
// pointer (nkeys + 1) and the permutation: perm(p) is the source entry placed at position p.
template <class KeyAt>
HostView<Offset> bucket(Ordinal nkeys, Offset nnz, KeyAt key, HostView<Offset> ptr) {
  std::fill(ptr.data(), ptr.data() + nkeys + 1, Offset(0));
  for (Offset k = 0; k < nnz; ++k) ++ptr(key(k) + 1);
  for (Ordinal i = 0; i < nkeys; ++i) ptr(i + 1) += ptr(i);
  auto next = make_host_view<Offset>("kspmv::convert::next", nkeys);
  std::copy(ptr.data(), ptr.data() + nkeys, next.data());
  auto perm = make_host_view<Offset>("kspmv::convert::perm", nnz);
  for (Offset k = 0; k < nnz; ++k) perm(next(key(k))++) = k;
  return perm;
}
}  // namespace

template <class Scalar>
CooMatrix<Scalar> to_coo(const CsrMatrix<Scalar>& a) {
  a.validate();
  CooMatrix<Scalar> c(a.nrows, a.ncols, a.nnz());
  for (Ordinal i = 0; i < a.nrows; ++i) {
    for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k) {
      c.row_idx(k) = i;
      c.col_idx(k) = a.col_idx(k);
      c.values(k) = a.values(k);
    }
  }
  return c;
}

template <class Scalar>
CsrMatrix<Scalar> to_csr(const CooMatrix<Scalar>& a) {
  a.validate();
  const Offset nnz = a.nnz();
  CsrMatrix<Scalar> unsorted(a.nrows, a.ncols, nnz);
  const auto perm = bucket(
      a.nrows, nnz, [&](Offset k) { return a.row_idx(k); }, unsorted.row_ptr);
  for (Offset p = 0; p < nnz; ++p) {
    unsorted.col_idx(p) = a.col_idx(perm(p));
    unsorted.values(p) = a.values(perm(p));
  }
  return sort_and_merge(unsorted);
}

template <class Scalar>
CscMatrix<Scalar> to_csc(const CsrMatrix<Scalar>& a) {
  a.validate();
  const Offset nnz = a.nnz();
  CscMatrix<Scalar> c(a.nrows, a.ncols, nnz);
  // Row-major traversal + stable bucketing by column keeps rows sorted within each column.
  auto row_of = make_host_view<Ordinal>("kspmv::convert::row_of", nnz);
  for (Ordinal i = 0; i < a.nrows; ++i)
    for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k) row_of(k) = i;
  const auto perm = bucket(
      a.ncols, nnz, [&](Offset k) { return a.col_idx(k); }, c.col_ptr);
  for (Offset p = 0; p < nnz; ++p) {
    c.row_idx(p) = row_of(perm(p));
    c.values(p) = a.values(perm(p));
  }
  return c;
}

template <class Scalar>
HostView<Offset> csc_order(const CsrMatrix<Scalar>& a) {
  a.validate();
  auto col_ptr = make_host_view<Offset>("kspmv::convert::col_ptr", std::size_t(a.ncols) + 1);
  return bucket(
      a.ncols, a.nnz(), [&](Offset k) { return a.col_idx(k); }, col_ptr);
}

template <class Scalar>
CsrMatrix<Scalar> to_csr(const CscMatrix<Scalar>& a) {
  // The CSC arrays of A are the CSR arrays of A^T.
  CsrMatrix<Scalar> at;
  at.nrows = a.ncols;
  at.ncols = a.nrows;
  at.row_ptr = a.col_ptr;
  at.col_idx = a.row_idx;
  at.values = a.values;
  return transpose(at);
}

template <class Scalar>
CsrMatrix<Scalar> transpose(const CsrMatrix<Scalar>& a) {
  const CscMatrix<Scalar> c = to_csc(a);
  CsrMatrix<Scalar> t;
  t.nrows = a.ncols;
  t.ncols = a.nrows;
  t.row_ptr = c.col_ptr;
  t.col_idx = c.row_idx;
  t.values = c.values;
  return t;
}

template <class Scalar>
CsrMatrix<Scalar> sort_and_merge(const CsrMatrix<Scalar>& a) {
  // First pass: sort each row's entries and count the distinct columns.
  auto order = make_host_view<Offset>("kspmv::convert::order", a.nnz());
  std::iota(order.data(), order.data() + a.nnz(), Offset(0));
  auto distinct = make_host_view<Offset>("kspmv::convert::distinct", std::size_t(a.nrows) + 1);
  distinct(0) = 0;
  for (Ordinal i = 0; i < a.nrows; ++i) {
    Offset* b = order.data() + a.row_ptr(i);
    Offset* e = order.data() + a.row_ptr(i + 1);
    std::stable_sort(b, e, [&](Offset x, Offset y) { return a.col_idx(x) < a.col_idx(y); });
    Offset count = 0;
    for (auto it = b; it != e; ++it)
      if (it == b || a.col_idx(*it) != a.col_idx(*(it - 1))) ++count;
    distinct(i + 1) = distinct(i) + count;
  }
  CsrMatrix<Scalar> s(a.nrows, a.ncols, distinct(a.nrows));
  s.row_ptr = distinct;
  for (Ordinal i = 0; i < a.nrows; ++i) {
    Offset out = s.row_ptr(i) - 1;
    for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k) {
      const Offset src = order(k);
      if (k == a.row_ptr(i) || a.col_idx(src) != s.col_idx(out)) {
        ++out;
        s.col_idx(out) = a.col_idx(src);
        s.values(out) = a.values(src);
      } else {
        s.values(out) += a.values(src);
      }
    }
  }
  return s;
}

template <class To, class From>
CsrMatrix<To> convert_scalar(const CsrMatrix<From>& a) {
  CsrMatrix<To> b(a.nrows, a.ncols, a.nnz());
  Kokkos::deep_copy(b.row_ptr, a.row_ptr);
  Kokkos::deep_copy(b.col_idx, a.col_idx);
  for (Offset k = 0; k < a.nnz(); ++k) b.values(k) = static_cast<To>(a.values(k));
  return b;
}

template <class Scalar>
CsrMatrix<Scalar> clone(const CsrMatrix<Scalar>& a) {
  CsrMatrix<Scalar> b(a.nrows, a.ncols, a.nnz());
  if (a.row_ptr.extent(0) > 0) Kokkos::deep_copy(b.row_ptr, a.row_ptr);
  Kokkos::deep_copy(b.col_idx, a.col_idx);
  Kokkos::deep_copy(b.values, a.values);
  return b;
}

#define KSPMV_INSTANTIATE(S)                                 \
  template CooMatrix<S> to_coo(const CsrMatrix<S>&);         \
  template CsrMatrix<S> to_csr(const CooMatrix<S>&);         \
  template CscMatrix<S> to_csc(const CsrMatrix<S>&);         \
  template HostView<Offset> csc_order(const CsrMatrix<S>&);  \
  template CsrMatrix<S> to_csr(const CscMatrix<S>&);         \
  template CsrMatrix<S> transpose(const CsrMatrix<S>&);      \
  template CsrMatrix<S> sort_and_merge(const CsrMatrix<S>&); \
  template CsrMatrix<S> clone(const CsrMatrix<S>&);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)
#undef KSPMV_INSTANTIATE
// Complex values: what the Operator and the tests use (the transpose goes through CSC).
template CscMatrix<Kokkos::complex<float>> to_csc(const CsrMatrix<Kokkos::complex<float>>&);
template CscMatrix<Kokkos::complex<double>> to_csc(const CsrMatrix<Kokkos::complex<double>>&);
template CsrMatrix<Kokkos::complex<float>> transpose(const CsrMatrix<Kokkos::complex<float>>&);
template CsrMatrix<Kokkos::complex<double>> transpose(const CsrMatrix<Kokkos::complex<double>>&);
template CsrMatrix<float> convert_scalar<float, double>(const CsrMatrix<double>&);
template CsrMatrix<double> convert_scalar<double, float>(const CsrMatrix<float>&);
template CsrMatrix<float> convert_scalar<float, float>(const CsrMatrix<float>&);
template CsrMatrix<double> convert_scalar<double, double>(const CsrMatrix<double>&);

}  // namespace kspmv

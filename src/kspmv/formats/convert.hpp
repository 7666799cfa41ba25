// Pure host conversions between CSR, COO and CSC, and CSR clean-up. Each checks its input
// (validate(): InvalidArgument naming the first bad row or entry) before it writes anything.
#pragma once

#include "kspmv/formats/coo.hpp"
#include "kspmv/formats/csc.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv {

// CSR -> COO, row-major order.
template <class Scalar>
CooMatrix<Scalar> to_coo(const CsrMatrix<Scalar>& a);

// COO -> CSR: entries sorted by (row, column), duplicates summed.
template <class Scalar>
CsrMatrix<Scalar> to_csr(const CooMatrix<Scalar>& a);

// CSR -> CSC (rows sorted within each column when the CSR columns are sorted).
template <class Scalar>
CscMatrix<Scalar> to_csc(const CsrMatrix<Scalar>& a);

// The order of to_csc(a): its p-th entry (CSC order) is entry order(p) of `a` (CSR order). Reads
// the pattern only (row_ptr, col_idx); what a refresh of the CSC's values gathers through.
template <class Scalar>
HostView<Offset> csc_order(const CsrMatrix<Scalar>& a);

// CSC -> CSR.
template <class Scalar>
CsrMatrix<Scalar> to_csr(const CscMatrix<Scalar>& a);

// A^T as CSR.
template <class Scalar>
CsrMatrix<Scalar> transpose(const CsrMatrix<Scalar>& a);

// Columns sorted within every row, duplicate entries summed into one.
template <class Scalar>
CsrMatrix<Scalar> sort_and_merge(const CsrMatrix<Scalar>& a);

// The same matrix with another scalar type (double <-> float).
template <class To, class From>
CsrMatrix<To> convert_scalar(const CsrMatrix<From>& a);

// A deep copy (Views are reference-counted handles; this copies the data).
template <class Scalar>
CsrMatrix<Scalar> clone(const CsrMatrix<Scalar>& a);

}  // namespace kspmv

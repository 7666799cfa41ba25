// The oracle of every test: a serial SpMV accumulating in long double.
#pragma once

#include <cstddef>

#include "kspmv/formats/csr.hpp"

namespace kspmv::reference {

// y = alpha*A*x + beta*y with cuSPARSE semantics: beta == 0 overwrites y (even NaN) and
// alpha == 0 does not read A (y = beta*y).
template <class Scalar>
void spmv(Scalar alpha, const CsrMatrix<Scalar>& a, const Scalar* x, Scalar beta, Scalar* y);

// ||y - ref||_2 / ||ref||_2 computed in long double; ||y - ref||_2 when ref is zero;
// +infinity when y holds a NaN or an infinity that ref does not.
template <class Scalar>
double rel_l2_error(const Scalar* y, const Scalar* ref, std::size_t n);

// The largest relative l2 error a correct kernel may show (1e-12 double, 1e-5 float).
template <class Scalar>
constexpr double tolerance() {
  return sizeof(Scalar) == sizeof(float) ? 1e-5 : 1e-12;
}

}  // namespace kspmv::reference

// The oracle of every test: a serial SpMV accumulating in long double (std::complex<long double>
// for complex values; magnitudes are then held in the real parts).
#pragma once

#include <cstddef>

#include "kspmv/core/complex.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv::reference {

// y = alpha*A*x + beta*y with cuSPARSE semantics: beta == 0 overwrites y (even NaN) and
// alpha == 0 does not read A (y = beta*y).
template <class Scalar>
void spmv(Scalar alpha, const CsrMatrix<Scalar>& a, const Scalar* x, Scalar beta, Scalar* y);

// ||y - ref||_2 / ||ref||_2 computed in long double over the entries where ref is finite
// (||y - ref||_2 when ref is zero there); +infinity when y holds a NaN or an infinity that ref
// does not hold at the same position (a NaN matches a NaN, an infinity the same infinity).
template <class Scalar>
double rel_l2_error(const Scalar* y, const Scalar* ref, std::size_t n);

// out_i = |alpha| sum_j |a_ij| |x_j| + |beta| |y0_i| in long double: the size of the terms of
// alpha*A*x + beta*y0. alpha == 0 does not read A; beta == 0 does not read y0 (may be null).
template <class Scalar>
void spmv_magnitude(Scalar alpha, const CsrMatrix<Scalar>& a, const Scalar* x, Scalar beta,
                    const Scalar* y0, Scalar* out);

// ||y - ref||_2 / ||magnitude||_2 in long double (||y - ref||_2 when magnitude is zero;
// non-finite entries of ref compared and +infinity as rel_l2_error): the normwise error relative
// to the terms, which cancellation cannot shrink.
template <class Scalar>
double rel_error(const Scalar* y, const Scalar* ref, const Scalar* magnitude, std::size_t n);

// The largest relative l2 error a correct kernel may show (1e-12 double, 1e-5 float; the same
// for complex values of those parts).
template <class Scalar>
constexpr double tolerance() {
  return sizeof(real_t<Scalar>) == sizeof(float) ? 1e-5 : 1e-12;
}

}  // namespace kspmv::reference

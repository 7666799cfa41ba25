#include "testing/reference.hpp"

#include <cmath>
#include <complex>
#include <limits>

namespace kspmv::reference {

namespace {

// v in long double: real, or std::complex<long double>.
template <class S>
auto wide(const S& v) {
  if constexpr (is_complex_v<S>)
    return std::complex<long double>(v.real(), v.imag());
  else
    return static_cast<long double>(v);
}

template <class S, class W>
S narrow(const W& w) {
  if constexpr (is_complex_v<S>)
    return S(static_cast<real_t<S>>(w.real()), static_cast<real_t<S>>(w.imag()));
  else
    return static_cast<S>(w);
}

template <class S>
long double magnitude(const S& v) {
  return std::abs(wide(v));
}

template <class S>
bool is_nan(const S& v) {
  if constexpr (is_complex_v<S>)
    return std::isnan(v.real()) || std::isnan(v.imag());
  else
    return std::isnan(v);
}

template <class S>
bool is_finite(const S& v) {
  if constexpr (is_complex_v<S>)
    return std::isfinite(v.real()) && std::isfinite(v.imag());
  else
    return std::isfinite(v);
}

}  // namespace

template <class Scalar>
void spmv(Scalar alpha, const CsrMatrix<Scalar>& a, const Scalar* x, Scalar beta, Scalar* y) {
  for (Ordinal i = 0; i < a.nrows; ++i) {
    decltype(wide(alpha)) sum = 0;
    if (alpha != Scalar(0)) {
      for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k)
        sum += wide(a.values(k)) * wide(x[a.col_idx(k)]);
      sum *= wide(alpha);
    }
    if (beta != Scalar(0)) sum += wide(beta) * wide(y[i]);
    y[i] = narrow<Scalar>(sum);
  }
}

template <class Scalar>
void spmv_magnitude(Scalar alpha, const CsrMatrix<Scalar>& a, const Scalar* x, Scalar beta,
                    const Scalar* y0, Scalar* out) {
  const long double abs_alpha = magnitude(alpha);
  const long double abs_beta = magnitude(beta);
  for (Ordinal i = 0; i < a.nrows; ++i) {
    long double sum = 0;
    if (alpha != Scalar(0)) {
      for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k)
        sum += magnitude(a.values(k)) * magnitude(x[a.col_idx(k)]);
      sum *= abs_alpha;
    }
    if (beta != Scalar(0)) sum += abs_beta * magnitude(y0[i]);
    out[i] = static_cast<Scalar>(static_cast<real_t<Scalar>>(sum));
  }
}

template <class Scalar>
double rel_error(const Scalar* y, const Scalar* ref, const Scalar* magnitude, std::size_t n) {
  long double diff = 0, norm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_finite(ref[i])) {  // agrees when y is the same NaN or infinity; no error then
      const bool same = is_nan(ref[i]) ? is_nan(y[i]) : y[i] == ref[i];
      if (!same) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (!is_finite(y[i])) return std::numeric_limits<double>::infinity();
    const long double d = reference::magnitude(wide(y[i]) - wide(ref[i]));
    diff += d * d;
    const long double m = reference::magnitude(magnitude[i]);
    norm += m * m;
  }
  return static_cast<double>(norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff));
}

template <class Scalar>
double rel_l2_error(const Scalar* y, const Scalar* ref, std::size_t n) {
  return rel_error(y, ref, ref, n);  // ||ref|| is the norm of the terms when nothing cancels
}

template void spmv(float, const CsrMatrix<float>&, const float*, float, float*);
template void spmv(double, const CsrMatrix<double>&, const double*, double, double*);
#define KSPMV_INSTANTIATE(S)                                                       \
  template void spmv(S, const CsrMatrix<S>&, const S*, S, S*);                     \
  template double rel_l2_error(const S*, const S*, std::size_t);                   \
  template void spmv_magnitude(S, const CsrMatrix<S>&, const S*, S, const S*, S*); \
  template double rel_error(const S*, const S*, const S*, std::size_t);
KSPMV_INSTANTIATE(Kokkos::complex<float>)
KSPMV_INSTANTIATE(Kokkos::complex<double>)
#undef KSPMV_INSTANTIATE
template double rel_l2_error(const float*, const float*, std::size_t);
template double rel_l2_error(const double*, const double*, std::size_t);
template void spmv_magnitude(float, const CsrMatrix<float>&, const float*, float, const float*,
                             float*);
template void spmv_magnitude(double, const CsrMatrix<double>&, const double*, double, const double*,
                             double*);
template double rel_error(const float*, const float*, const float*, std::size_t);
template double rel_error(const double*, const double*, const double*, std::size_t);

}  // namespace kspmv::reference

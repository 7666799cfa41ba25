#include "testing/reference.hpp"

#include <cmath>
#include <limits>

namespace kspmv::reference {

template <class Scalar>
void spmv(Scalar alpha, const CsrMatrix<Scalar>& a, const Scalar* x, Scalar beta, Scalar* y) {
  for (Ordinal i = 0; i < a.nrows; ++i) {
    long double sum = 0;
    if (alpha != Scalar(0)) {
      for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k)
        sum += static_cast<long double>(a.values(k)) * x[a.col_idx(k)];
      sum *= alpha;
    }
    if (beta != Scalar(0)) sum += static_cast<long double>(beta) * y[i];
    y[i] = static_cast<Scalar>(sum);
  }
}

template <class Scalar>
void spmv_magnitude(Scalar alpha, const CsrMatrix<Scalar>& a, const Scalar* x, Scalar beta,
                    const Scalar* y0, Scalar* out) {
  const long double abs_alpha = std::fabs(static_cast<long double>(alpha));
  const long double abs_beta = std::fabs(static_cast<long double>(beta));
  for (Ordinal i = 0; i < a.nrows; ++i) {
    long double sum = 0;
    if (alpha != Scalar(0)) {
      for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k)
        sum += std::fabs(static_cast<long double>(a.values(k))) *
               std::fabs(static_cast<long double>(x[a.col_idx(k)]));
      sum *= abs_alpha;
    }
    if (beta != Scalar(0)) sum += abs_beta * std::fabs(static_cast<long double>(y0[i]));
    out[i] = static_cast<Scalar>(sum);
  }
}

template <class Scalar>
double rel_error(const Scalar* y, const Scalar* ref, const Scalar* magnitude, std::size_t n) {
  long double diff = 0, norm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(ref[i])) {  // agrees when y is the same NaN or infinity; no error then
      const bool same = std::isnan(ref[i]) ? std::isnan(y[i]) : y[i] == ref[i];
      if (!same) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (!std::isfinite(y[i])) return std::numeric_limits<double>::infinity();
    const long double d = static_cast<long double>(y[i]) - ref[i];
    diff += d * d;
    norm += static_cast<long double>(magnitude[i]) * magnitude[i];
  }
  return static_cast<double>(norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff));
}

template <class Scalar>
double rel_l2_error(const Scalar* y, const Scalar* ref, std::size_t n) {
  return rel_error(y, ref, ref, n);  // ||ref|| is the norm of the terms when nothing cancels
}

template void spmv(float, const CsrMatrix<float>&, const float*, float, float*);
template void spmv(double, const CsrMatrix<double>&, const double*, double, double*);
template double rel_l2_error(const float*, const float*, std::size_t);
template double rel_l2_error(const double*, const double*, std::size_t);
template void spmv_magnitude(float, const CsrMatrix<float>&, const float*, float, const float*,
                             float*);
template void spmv_magnitude(double, const CsrMatrix<double>&, const double*, double, const double*,
                             double*);
template double rel_error(const float*, const float*, const float*, std::size_t);
template double rel_error(const double*, const double*, const double*, std::size_t);

}  // namespace kspmv::reference

// Jacobi's M^-1 = diag(A)^-1 (Saad 2003, Sec. 10.2), checked entry by entry.
#include "kspmv/solvers/jacobi.hpp"

#include <cmath>
#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv {

template <class S>
Jacobi<S>::Jacobi(const CsrMatrix<S>& a) : inverse_(a.nrows) {
  if (a.nrows != a.ncols)
    throw InvalidArgument("jacobi: the matrix is " + std::to_string(a.nrows) + " x " +
                          std::to_string(a.ncols) + ", not square");
  for (Ordinal i = 0; i < a.nrows; ++i) {
    bool found = false;
    double d = 0;  // duplicates summed in double, as a reader would sum them
    for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k)
      if (a.col_idx(k) == i) found = true, d += double(a.values(k));
    const S v = static_cast<S>(d);
    const std::string row = "jacobi: row " + std::to_string(i + 1) + " ";
    if (!found) throw InvalidArgument(row + "has no diagonal entry (Jacobi needs a(i,i) > 0)");
    if (!std::isfinite(v)) throw InvalidArgument(row + "has a diagonal entry that is not finite");
    if (!(v > 0))
      throw InvalidArgument(row + "has the diagonal entry " + std::to_string(double(v)) +
                            " (Jacobi needs a(i,i) > 0, as a symmetric positive definite "
                            "matrix has)");
    inverse_[i] = S(1) / v;
  }
}

template class Jacobi<float>;
template class Jacobi<double>;

}  // namespace kspmv

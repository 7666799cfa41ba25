// The Jacobi (diagonal) preconditioner of kspmv::cg, M = diag(A) (Saad 2003, Sec. 10.2): the
// inverse of the matrix's diagonal, taken once at set-up.
#pragma once

#include <vector>

#include "kspmv/formats/csr.hpp"

namespace kspmv {

template <class Scalar>
class Jacobi {
 public:
  // Throws InvalidArgument for a non-square matrix, or naming the first row (1-based, as in a
  // Matrix Market file) whose diagonal entry is missing, zero, negative or not finite: CG's
  // preconditioner must be symmetric positive definite. Duplicate diagonal entries are summed.
  explicit Jacobi(const CsrMatrix<Scalar>& a);
  // 1 / a(i, i) for each row i.
  const std::vector<Scalar>& inverse_diagonal() const { return inverse_; }

 private:
  std::vector<Scalar> inverse_;
};

extern template class Jacobi<float>;
extern template class Jacobi<double>;

}  // namespace kspmv

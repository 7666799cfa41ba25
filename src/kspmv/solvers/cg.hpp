// Conjugate gradients (Gao et al. 2024, Alg. 1) for a symmetric positive definite matrix bound
// to a kspmv::Operator (host backend, or one CUDA device with host vectors).
#pragma once

#include "kspmv/core/cg_result.hpp"
#include "kspmv/operator.hpp"

namespace kspmv {

// Solves A x = b from the initial guess in x (ncols entries; b: nrows). Throws InvalidArgument
// for a non-square operator or options out of range. b == 0 returns x = 0 after 0 iterations.
template <class Scalar>
CgResult cg(Operator<Scalar>& a, const Scalar* b, Scalar* x, const CgOptions& options = {});

extern template CgResult cg(Operator<float>&, const float*, float*, const CgOptions&);
extern template CgResult cg(Operator<double>&, const double*, double*, const CgOptions&);

}  // namespace kspmv

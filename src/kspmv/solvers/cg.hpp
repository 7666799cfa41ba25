// Conjugate gradients (Gao et al. 2024, Alg. 1), preconditioned by Jacobi where asked (PCG, Saad
// 2003, Alg. 9.1), for a symmetric positive definite matrix bound
// to a kspmv::Operator, on whatever devices it runs: its SpMV and CG's fused vector operations
// (Operator::cg_vectors) in the operator's layout, so that on several devices the vectors stay
// where the exchange leaves them (AllGather: whole on every device, redundant updates; Halo and
// allgather-x: each device its rows, dot products reduced across devices; Merge: on the first
// device). An iteration costs the host no wait: the stop is learnt a few iterations late.
#pragma once

#include "kspmv/core/cg_result.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/solvers/jacobi.hpp"

namespace kspmv {

// Solves A x = b from the initial guess in x (host arrays of n entries). Throws InvalidArgument
// for a non-square operator or options out of range. b == 0 returns x = 0 after 0 iterations.
// ms_per_iteration: the time from the start of the iterations to the stop (device time on a
// device) over the iterations. With `preconditioner` (built from the operator's matrix), z =
// M^-1 r on the same devices, fused into the vector operations; the stop still tests ||r||.
// `monitor`, when given, sees the relative residual of every iteration.
// A reordered operator (Options::reorder): b, x and the preconditioner's diagonal are permuted
// once, CG runs in the permuted order (no gather or scatter around its SpMVs), and x comes back
// in the caller's order.
template <class Scalar>
CgResult cg(Operator<Scalar>& a, const Scalar* b, Scalar* x, const CgOptions& options = {},
            const Jacobi<Scalar>* preconditioner = nullptr, const CgMonitor& monitor = {});

extern template CgResult cg(Operator<float>&, const float*, float*, const CgOptions&,
                            const Jacobi<float>*, const CgMonitor&);
extern template CgResult cg(Operator<double>&, const double*, double*, const CgOptions&,
                            const Jacobi<double>*, const CgMonitor&);

}  // namespace kspmv

// Conjugate gradients on several GPUs (Gao et al. 2024, Alg. 1 and §5.3) on top of the
// multi-device executor. Three variants, chosen by the executor's exchange and `comp`:
//   AllGather: every device holds whole vectors and does every vector operation redundantly;
//              SpMV ends with the whole q everywhere (the paper's iterative framework).
//   Halo:      each device owns its rows of every vector; SpMV receives only the x entries its
//              rows reference; dot products are partial sums reduced across devices.
//   comp:      (AllGather executor, comp = true) the paper's CG(comp) baseline: vectors owned by
//              rows, the whole p sent to every device before each SpMV, q left where computed.
// Scalars (alpha, beta, dots) go through the host each iteration; dots use a two-stage reduction
// in double on each device.
#pragma once

#include "backends/cuda/multi_device.hpp"
#include "kspmv/core/cg_result.hpp"

namespace kspmv::cuda {

// Solves A x = b (host vectors, nrows entries; x holds the initial guess) with the executor's
// matrix. Throws InvalidArgument for a non-square matrix or bad options, UnsupportedError for the
// Merge exchange, for comp without AllGather, and for comp or Halo with redundant blocks.
template <class S>
CgResult cg_multi(MultiDeviceSpmv<S>& a, const S* b, S* x, const CgOptions& options = {},
                  bool comp = false);

extern template CgResult cg_multi(MultiDeviceSpmv<float>&, const float*, float*, const CgOptions&,
                                  bool);
extern template CgResult cg_multi(MultiDeviceSpmv<double>&, const double*, double*,
                                  const CgOptions&, bool);

}  // namespace kspmv::cuda

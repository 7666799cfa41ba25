// Warp-shuffle reduction over groups of V consecutive lanes (V a power of two <= 32).
#pragma once

#include "kspmv/core/complex.hpp"

namespace kspmv::cuda {

// Every lane of the warp must call it (full mask); lane 0 of each group gets the group's sum.
// Complex values shuffle their two parts.
template <int V, class Scalar>
__device__ __forceinline__ Scalar warp_sum(Scalar v) {
  static_assert(V >= 1 && V <= 32 && (V & (V - 1)) == 0, "V must be a power of two <= 32");
#pragma unroll
  for (int offset = V / 2; offset > 0; offset /= 2) {
    if constexpr (is_complex_v<Scalar>)
      v += Scalar(__shfl_down_sync(0xffffffffu, v.re, offset, V),
                  __shfl_down_sync(0xffffffffu, v.im, offset, V));
    else
      v += __shfl_down_sync(0xffffffffu, v, offset, V);
  }
  return v;
}

}  // namespace kspmv::cuda

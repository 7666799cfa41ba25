// Binary search in device code, shared by the kernel families.
#pragma once

#include "kspmv/core/types.hpp"

namespace kspmv::cuda {

// The last index i < n with v[i] <= x, for non-decreasing v with v[0] <= x (v of 32 or 64 bits).
template <class T>
__device__ inline Ordinal last_at_most(const T* __restrict__ v, Ordinal n, long long x) {
  Ordinal lo = 0, hi = n;  // v[lo] <= x < v[hi] (v[n] taken as infinite)
  while (hi - lo > 1) {
    const Ordinal mid = lo + (hi - lo) / 2;
    if (v[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace kspmv::cuda

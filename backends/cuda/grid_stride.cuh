// Grid-stride loops shared by the CUDA sources: blocks of kStrideBlock threads, at most 65535 of
// them, each thread taking every (grid size)-th item.
#pragma once

#include <algorithm>

namespace kspmv::cuda {

inline constexpr int kStrideBlock = 256;

// Blocks of a grid-stride loop over `count` items (at least one, so that an empty loop launches).
inline unsigned grid_for(long long count) {
  return static_cast<unsigned>(
      std::clamp<long long>((count + kStrideBlock - 1) / kStrideBlock, 1, 65535));
}

}  // namespace kspmv::cuda

// for (long long i = ...) over [0, count) in a grid-stride kernel.
#define KSPMV_GRID_STRIDE(i, count)                                                              \
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < (count); \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

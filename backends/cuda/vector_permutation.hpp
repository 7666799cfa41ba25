// VectorPermutation (core/vector_permutation.hpp) for vectors in a CUDA device's memory.
#pragma once

#include <memory>
#include <vector>

#include "kspmv/core/vector_permutation.hpp"

namespace kspmv::cuda {

// perm[new] = old, copied to `device` with work arrays for one column each. window > 0: vectors
// are moved by WindowedGather in windows of that many entries, else by one direct gather.
template <class Scalar>
std::unique_ptr<VectorPermutation<Scalar>> make_vector_permutation(const std::vector<Ordinal>& perm,
                                                                   int device, Ordinal window = 0);

}  // namespace kspmv::cuda

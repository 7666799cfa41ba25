// VectorPermutation (core/vector_permutation.hpp) for host vectors.
#pragma once

#include <memory>
#include <vector>

#include "kspmv/core/vector_permutation.hpp"

namespace kspmv::host {

// perm[new] = old.
template <class Scalar>
std::unique_ptr<VectorPermutation<Scalar>> make_vector_permutation(std::vector<Ordinal> perm);

}  // namespace kspmv::host

// One MPI rank's vectors where an Operator computes (kspmv/core/rank_vectors.hpp): on its CUDA
// device for the CUDA backend, in host memory for the host backends.
#pragma once

#include <memory>

#include "kspmv/core/options.hpp"
#include "kspmv/core/rank_vectors.hpp"

namespace kspmv {

// Vectors in the memory that an Operator of `backend` on `device` reads: that CUDA device's for
// the CUDA backend, the host's otherwise. Throws UnsupportedError for the kokkos-default backend
// on a device (its vectors are Kokkos Views).
template <class Scalar>
std::unique_ptr<RankVectors<Scalar>> make_rank_vectors(Backend backend, int device);

extern template std::unique_ptr<RankVectors<float>> make_rank_vectors(Backend, int);
extern template std::unique_ptr<RankVectors<double>> make_rank_vectors(Backend, int);

}  // namespace kspmv

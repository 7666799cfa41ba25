// One MPI rank's vectors on its CUDA device (core/rank_vectors.hpp): the operations on a stream
// of their own that the rank's Operator applies on too, sums reduced in double on the device in
// block order (the same result every run) with only the sums read back, and the halo gathered on
// the device and copied through page-locked memory on a second stream while the first computes.
// Kokkos-free.
#pragma once

#include <memory>

#include "kspmv/core/rank_vectors.hpp"

namespace kspmv::cuda {

template <class S>
std::unique_ptr<RankVectors<S>> make_device_rank_vectors(int device);

extern template std::unique_ptr<RankVectors<float>> make_device_rank_vectors(int);
extern template std::unique_ptr<RankVectors<double>> make_device_rank_vectors(int);

}  // namespace kspmv::cuda

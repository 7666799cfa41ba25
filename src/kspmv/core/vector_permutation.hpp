// Vectors gathered and scattered through a permutation around an apply of P A P^T
// (Options::reorder), where the vectors are: the host backend's loops for host vectors, a CUDA
// kernel for device vectors. Kokkos-free: the CUDA backend implements it.
#pragma once

#include <cstddef>

#include "kspmv/core/operator_impl.hpp"

namespace kspmv {

template <class Scalar>
class VectorPermutation {
 public:
  virtual ~VectorPermutation() = default;
  // out[i + c*n] = in[perm[i] + c*ld] for i < n, c < k: enqueued on `stream` for device memory,
  // done at once for host memory.
  virtual void gather(const Scalar* in, std::size_t ld, Scalar* out, int k,
                      DeviceStream stream) = 0;
  // out[perm[i] + c*ld] = in[i + c*n], likewise.
  virtual void scatter(const Scalar* in, Scalar* out, std::size_t ld, int k,
                       DeviceStream stream) = 0;
  // Work array `which` (0 or 1) of n*k entries in the vectors' memory, kept for later calls:
  // made for k = 1 when the permutation is, grown (an allocation) for more columns.
  virtual Scalar* work(int which, int k) = 0;
};

}  // namespace kspmv

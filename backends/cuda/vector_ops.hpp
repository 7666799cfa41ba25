// Small device vector operations shared by the kernel families.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kspmv/core/types.hpp"

namespace kspmv::cuda {

// Enqueues y = beta*y on `stream` (y = 0 when beta == 0, NaN included): SpMV with alpha == 0
// or an empty matrix, which must not read A.
template <class Scalar>
void scale_vector(Scalar* y, Ordinal m, Scalar beta, cudaStream_t stream);

// The same for k column vectors of m entries, Y(i, c) = y[i + c*ldy] (ldy >= m): the rows
// between m and ldy are not touched.
template <class Scalar>
void scale_columns(Scalar* y, Ordinal m, std::size_t ldy, int k, Scalar beta, cudaStream_t stream);

// Enqueues dst[i] = src[idx[i]] for i < count on `stream` (halo send buffers, value refresh).
template <class Scalar>
void gather_entries(Scalar* dst, const Scalar* src, const Ordinal* idx, Ordinal count,
                    cudaStream_t stream);

// Enqueues dst[idx[i]] = src[i] for i < count on `stream` (halo receive buffers).
template <class Scalar>
void scatter_entries(Scalar* dst, const Scalar* src, const Ordinal* idx, Ordinal count,
                     cudaStream_t stream);

// Enqueues dst[idx[i]] = src[idx[i]] for i < count on `stream`: the halo's entries read where
// their owner holds them (src: memory that the current device may read, cuda::device_can_read).
template <class Scalar>
void pull_entries(Scalar* dst, const Scalar* src, const Ordinal* idx, Ordinal count,
                  cudaStream_t stream);

// Enqueues y[i] += p[i] for i < count on `stream` (the Merge exchange's sums).
template <class Scalar>
void add_vector(Scalar* y, const Scalar* p, Ordinal count, cudaStream_t stream);

}  // namespace kspmv::cuda

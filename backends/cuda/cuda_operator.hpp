// Entry points of the CUDA backend. Kokkos-free: the matrix arrives as host pointers.
#pragma once

#include <memory>

#include "kspmv/core/operator_impl.hpp"

namespace kspmv::cuda {

// Number of CUDA devices present (0 when the driver finds none; never throws).
int device_count();

// Builds the CUDA execution of options.kernel on options.devices. The host matrix is copied
// (Resident) or kept in pinned host memory (Streamed) before this returns.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrPointers<Scalar>& host_matrix,
                                                    const Options& options);

}  // namespace kspmv::cuda

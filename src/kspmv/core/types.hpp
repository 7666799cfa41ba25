// Basic types shared by every layer. Kokkos-free so that CUDA sources can include it.
#pragma once

#include <cstdint>

namespace kspmv {

using Ordinal = std::int32_t;  // row and column indices
using Offset = std::int64_t;   // host row pointers: matrices past 2^31 non-zeros load

// Offsets narrowed for device copies; a matrix with nnz >= 2^31 cannot be sent (UnsupportedError).
using DeviceOffset = std::int32_t;

}  // namespace kspmv

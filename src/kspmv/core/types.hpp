// Basic types shared by every layer. Kokkos-free so that CUDA sources can include it.
#pragma once

#include <cstdint>

namespace kspmv {

using Ordinal = std::int32_t;  // row and column indices
using Offset = std::int64_t;   // host row pointers: matrices past 2^31 non-zeros load

// Device row pointers are chosen per matrix: DeviceOffset (32-bit) where the non-zeros fit,
// Offset (64-bit) for a matrix of 2^31 non-zeros or more (narrow_offsets).
using DeviceOffset = std::int32_t;

// Whether a matrix (or a range of it) of `nnz` non-zeros can take 32-bit device offsets.
constexpr bool narrow_offsets(Offset nnz) {
  return nnz <= Offset{INT32_MAX};
}

}  // namespace kspmv

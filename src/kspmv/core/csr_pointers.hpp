// Plain pointer view of a CSR matrix: what the Kokkos-free format builders and the CUDA backend
// take (docs/DESIGN.md "Data model").
#pragma once

#include <cstddef>

#include "kspmv/core/types.hpp"

namespace kspmv {

// A CSR matrix as pointers into host or device memory, depending on who holds it.
template <class Scalar, class OffsetT = Offset>
struct CsrPointers {
  const OffsetT* row_ptr = nullptr;  // m + 1
  const Ordinal* col = nullptr;      // nnz
  const Scalar* val = nullptr;       // nnz
  Ordinal m = 0;
  Ordinal n = 0;
  OffsetT nnz() const { return m > 0 ? row_ptr[m] : (row_ptr ? row_ptr[0] : 0); }
};

// Where an apply's vectors or a matrix's arrays live: host memory, or the memory of the
// operator's (first) device.
enum class Place { Host, Device };

// A CSR matrix in device memory with the caller's integer types (KokkosSparse's arrays), as the
// CUDA backend takes it from Views: offsets of 4 or 8 bytes, signed or not, column indices of 4
// or 8 bytes.
template <class Scalar>
struct DeviceCsrArrays {
  const void* row_ptr = nullptr;  // m + 1 offsets (null when m == 0 and there are no offsets)
  int offset_bytes = 8;
  bool offset_signed = true;
  const void* col = nullptr;  // nnz column indices
  int index_bytes = 4;
  const Scalar* val = nullptr;  // nnz values
  Ordinal m = 0, n = 0;
  std::size_t nnz = 0;  // the extent of the column and value arrays
};

}  // namespace kspmv

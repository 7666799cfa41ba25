// Plain pointer view of a CSR matrix: what the Kokkos-free format builders and the CUDA backend
// take (DESIGN.md "Data model").
#pragma once

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

}  // namespace kspmv

// A CSR matrix that arrives in the memory of Kokkos' default execution space (the caller's Views,
// DeviceCsrArrays) made the arrays the portable kernels read, and checked, in that space.
#pragma once

#include <Kokkos_Core.hpp>

#include "kspmv/core/csr_pointers.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv::host {

using SpaceMemory = Kokkos::DefaultExecutionSpace::memory_space;

// A CSR in SpaceMemory as the kokkos-default backend holds it.
template <class S>
struct SpaceCsrArrays {
  Kokkos::View<const Offset*, SpaceMemory> row_ptr;  // m + 1
  Kokkos::View<const Ordinal*, SpaceMemory> col;
  Kokkos::View<S*, SpaceMemory> val;
  Ordinal m = 0, n = 0;
  Offset nnz = 0;
};

// The arrays of `a` (memory of the default execution space): a row map of 64-bit signed offsets
// and 32-bit column indices are used in place (borrowed: the caller keeps them alive), others
// widened or narrowed once into copies in the space. The values are always copied, so that
// update_values never writes into the caller's array. With `validate`, checked in the space as
// CsrMatrix::validate checks a host matrix (InvalidArgument naming the first bad row or entry).
template <class S>
SpaceCsrArrays<S> adopt_in_space(const DeviceCsrArrays<S>& a, bool validate);

// The arrays copied to a host CsrMatrix (the current values).
template <class S>
CsrMatrix<S> to_host(const SpaceCsrArrays<S>& a);

}  // namespace kspmv::host

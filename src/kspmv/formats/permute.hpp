// The symmetric permutation P A P^T of a square CSR matrix (Options::reorder): row i of the
// result is row perm[i] of A, its columns renumbered c -> inv[c], its entries in A's order (so
// that new values for A's pattern map row by row, permute_values).
#pragma once

#include <vector>

#include "kspmv/formats/csr.hpp"

namespace kspmv {

// perm[new] = old, a permutation of [0, a.nrows); InvalidArgument for a rectangular matrix or a
// perm of another length.
template <class Scalar>
CsrMatrix<Scalar> permute_symmetric(const CsrMatrix<Scalar>& a, const std::vector<Ordinal>& perm);

// The values of permute_symmetric(a, perm) from values in a's CSR order: out[b.row_ptr(i) + j]
// = in[a.row_ptr(perm[i]) + j], b's row pointer found from a's row lengths (O(n)), without b.
template <class Scalar>
void permute_values(const CsrMatrix<Scalar>& a, const std::vector<Ordinal>& perm, const Scalar* in,
                    Scalar* out);

}  // namespace kspmv

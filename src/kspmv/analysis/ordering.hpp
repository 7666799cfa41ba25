// Orderings of the rows and columns of a square matrix for a symmetric permutation P A P^T that
// clusters the columns each group of rows reads (docs/DESIGN.md "Reordering"). Each returns
// perm with perm[new] = old, a permutation of [0, n). Kokkos-free: they read a row pointer and
// column indices in host memory.
#pragma once

#include <vector>

#include "kspmv/core/types.hpp"

namespace kspmv::analysis {

// Reverse Cuthill-McKee (Cuthill and McKee 1969; the root a pseudo-peripheral vertex after
// George and Liu 1979) on the graph of A's pattern, each row's columns its neighbours: breadth
// first from the root, a vertex's unnumbered neighbours in order of increasing degree, the whole
// order reversed. Every connected component in turn, from its vertex of least degree (a pattern
// that is not symmetric is walked along its rows). Throws InvalidArgument for a column >= n.
std::vector<Ordinal> rcm_order(const Offset* row_ptr, const Ordinal* col, Ordinal n);

// Breadth first along the rows, every component from its vertex of least degree, neighbours in
// column order: one pass, the stand-in Reorder::Auto measures before computing RCM (both number
// the graph level by level). Throws InvalidArgument for a column >= n.
std::vector<Ordinal> bfs_order(const Offset* row_ptr, const Ordinal* col, Ordinal n);

// Rows by decreasing length, ties in their order (hub clustering: the columns of the longest
// rows, the most read entries of x in a power-law graph, numbered first and kept together).
std::vector<Ordinal> degree_order(const Offset* row_ptr, Ordinal n);

// inv[perm[i]] = i.
std::vector<Ordinal> inverse_permutation(const std::vector<Ordinal>& perm);

}  // namespace kspmv::analysis

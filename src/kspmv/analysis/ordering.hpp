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

// Seeds of bfs_order: every kBfsSeedSpacing-th index, then among the vertices that the first
// round left unnumbered (components, or parts of a pattern that is not symmetric, without a
// seed) every kBfsSeedSpacing / kBfsSeedShrink-th, and so on down to every one.
inline constexpr Ordinal kBfsSeedSpacing = 64, kBfsSeedShrink = 8;

// Breadth first from many seeds at once: each vertex joins the cell of the nearest seed (of
// least index among the nearest), the cells numbered one after another by their seeds' indices,
// each level by level, ties by index. One pass over the pattern and counting sorts (O(nnz + n)),
// and a level-synchronous search that the CUDA backend runs on the device with the same result
// (backends/cuda/bfs_order.cu). Seeds every 64 rows measured by the locality model, as it
// counted x's 32-byte sectors, as RCM within 0.94-1.11x of its bytes (k-mer 2e6 0.99, rgg 0.98,
// FullChip-like 0.94, a scrambled 3D grid 1.11), where cells of 512 and 4096 rows did worse on
// k-mer (1.04, 1.18) and on the grid. Counting 64-byte atoms: k-mer 2e6 1.07, rgg scale 20 0.99,
// FullChip-like 1e6 0.99 (on an H200, k-mer 6e7's apply took 1.13x RCM's).
// Walks along the rows; throws InvalidArgument for a column >= n.
std::vector<Ordinal> bfs_order(const Offset* row_ptr, const Ordinal* col, Ordinal n);

// Rows by decreasing length, ties in their order (hub clustering: the columns of the longest
// rows, the most read entries of x in a power-law graph, numbered first and kept together).
std::vector<Ordinal> degree_order(const Offset* row_ptr, Ordinal n);

// inv[perm[i]] = i.
std::vector<Ordinal> inverse_permutation(const std::vector<Ordinal>& perm);

}  // namespace kspmv::analysis

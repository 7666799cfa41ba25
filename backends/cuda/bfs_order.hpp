// Reorder::Bfs on the device: analysis::bfs_order's permutation of a square pattern in device
// memory, found by a level-synchronous search there, and P A P^T built there.
#pragma once

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

// perm[new] = old and inv[old] = new in device memory (of the current device).
struct BfsPermutation {
  DeviceBuffer<Ordinal> perm, inv;
};

// analysis::bfs_order of the n x n pattern (row_ptr, 32-bit, and col in device memory), the
// same permutation: each seed round searches from its seeds level by level, a kernel a level,
// each vertex claimed by the first search to reach it (atomicCAS on its level) and given the
// least seed of its neighbours one level nearer (atomicMin), so the result does not depend on
// the order the threads run in; then one radix sort by (seed, level), stable. Work on `stream`;
// the host waits for each level's frontier count (a few bytes), about 140 levels on a k-mer graph.
BfsPermutation bfs_order(const DeviceOffset* row_ptr, const Ordinal* col, Ordinal n,
                         cudaStream_t stream);

// P A P^T of the n x n matrix `a` (32-bit offsets, current device) through `p`, as
// formats/permute.hpp builds it on the host: row i is row perm[i] of A, its columns renumbered
// through inv, its entries in A's order. Work on `stream`; returns when it is queued.
template <class Scalar>
DeviceCsr<Scalar> permute_symmetric(const DeviceCsr<Scalar>& a, const BfsPermutation& p,
                                    cudaStream_t stream);

}  // namespace kspmv::cuda

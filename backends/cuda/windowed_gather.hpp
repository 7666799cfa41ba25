// A vector moved through a permutation in two passes that keep its reads in the L2: for device
// vectors larger than the cache, where a direct gather reads a 64-byte DRAM atom for each
// 8-byte entry (Reorder's x gathered and y scattered around each apply).
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv::cuda {

// Enqueues inv[perm[i]] = i for i < n on `stream` (perm a permutation of [0, n)).
void invert_permutation(const Ordinal* perm, Ordinal n, Ordinal* inv, cudaStream_t stream);

// out[i] = in[src[i]] for i < n, src a permutation of [0, n), as two gathers through a work
// array: pass 1 reads `in` window by window (the entries whose source lies in one window of
// `window` entries, in order of i), pass 2 puts each entry in place, reading the windows' runs
// at once, each in order. Each pass streams an index and its output; the first's reads of `in`
// stay in one window, which the L2 holds, so each of in's atoms is read from memory once. Both
// indices are built on the device once (a radix sort of i by src[i]'s window).
class WindowedGather {
 public:
  WindowedGather() = default;
  // Through src (device memory of the current device, n entries), or through its inverse where
  // `inverse` (out[src[i]] = in[i]: a scatter as a gather). Work on `stream`.
  WindowedGather(const Ordinal* src, Ordinal n, Ordinal window, bool inverse, cudaStream_t stream);
  // Enqueues the two passes on `stream`; `work` holds n entries, `in` and `out` may not overlap.
  template <class Scalar>
  void run(const Scalar* in, Scalar* out, Scalar* work, cudaStream_t stream) const;

 private:
  Ordinal n_ = 0;
  DeviceBuffer<Ordinal> from_;  // pass 1: work[t] = in[from_[t]], t by (src's window, i)
  DeviceBuffer<Ordinal> slot_;  // pass 2: out[i] = work[slot_[i]]
};

}  // namespace kspmv::cuda

// The Halo exchange's lists, found on the GPU (docs/DESIGN.md "Several devices"): from the global
// column indices of a device's pieces, already on that device, every column they read outside
// the device's own x entries is marked; then, per other device, the marked columns it owns are
// listed in increasing order (cub::DeviceSelect over each of its column spans). O(nnz + n) work
// on the device and the counts read back: no pass over the matrix on the host. Vectors keep
// global positions, so columns are not renumbered and one list serves the owner (gather) and
// the receiver (scatter).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "kspmv/core/types.hpp"
#include "partitioners/exchange.hpp"

namespace kspmv::cuda {

class HaloFinder {
 public:
  // The marks tell at most this many groups of columns (a device's pieces) apart.
  static constexpr int kMaxGroups = part::kMaxStreamSlots;
  // The scratch it needs for n columns and up to `max_spans` selected spans: n bits of marks,
  // n indices, the spans' counts and the selection's temporary storage.
  static std::size_t scratch_bytes(Ordinal n, std::size_t max_spans);
  // For a device that owns the x spans `own` of n columns, whose marks will see `entries`
  // columns in all; work is enqueued on `stream`, in `scratch` (device memory of
  // scratch_bytes(n, max_spans), kept alive until the lists are copied).
  HaloFinder(Ordinal n, const std::vector<part::Span>& own, std::size_t max_spans, Offset entries,
             unsigned char* scratch, cudaStream_t stream);
  // Marks the columns among col[0, nnz) (device memory, 16-byte aligned for the fastest loads)
  // outside the device's own spans, and notes whether group `group` (< kMaxGroups) read any: col
  // holds them when the call is made, or work queued on `stream` before it writes them.
  void mark(const Ordinal* col, Offset nnz, int group);
  // After every mark: enqueues the list of the marked columns of `spans` (another device's x
  // spans) as list `k` (one call per other device, k = 0, 1, ...).
  void select(int k, const std::vector<part::Span>& spans);
  // After every select: waits for the stream and returns the length of each list.
  std::vector<Ordinal> counts();
  // After counts: whether the columns marked for `group` included another device's.
  bool reads_other(int group) const;
  // Enqueues the copy of list k (counts()[k] indices) to `to` (device memory of this device).
  void copy_list(int k, Ordinal* to) const;

 private:
  struct Selection {
    std::vector<Ordinal> at;  // where each span's selection starts in found_
    Ordinal first = 0;        // its index among the spans' counts
  };
  Ordinal n_;
  std::vector<part::Span> own_;
  std::size_t max_spans_;
  bool read_first_;  // many entries a column: marks are read before they are set
  cudaStream_t stream_;
  unsigned* marks_;  // a bit a column
  unsigned* reads_;  // per group: whether it read another device's column
  Ordinal *found_, *span_counts_;
  unsigned char* temp_;
  std::size_t temp_bytes_ = 0;
  Ordinal used_ = 0;  // entries of found_ reserved by the selections so far
  std::vector<Selection> lists_;
  std::vector<part::Span> spans_;     // every selected span, in order
  std::vector<Ordinal> host_counts_;  // the spans' counts, then the groups' flags
};

}  // namespace kspmv::cuda

// segSpMV and segSpMV-r (paper 5): rows cut into padded fixed-length segments (seg_plan.hpp),
// products loaded perfectly coalesced into shared memory, segment sums by one thread per segment
// (segSpMV) or a tree reduction (segSpMV-r), and the per-row sum of segments on the GPU.
#pragma once

#include <memory>

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

// Builds the segmented layout of `host` (host pointers) and uploads it, with its tile plan, to
// the current device; the kernel holds its own padded arrays (no DeviceCsr). tree_reduce picks
// segSpMV-r (Kernel::SegR, for long segments) over segSpMV (Kernel::Seg). seg_length 0 takes
// seg_length_min_traffic (seg_plan.hpp); otherwise a power of two in [1, kMaxSegLength]
// (InvalidArgument). The segment pointers are 32-bit when the segments fit and 64-bit when the
// matrix has 2^31 segments or more, or when `wide` asks for them. run() uses work buffers of the
// object: one run at a time per object. For update_values it keeps the row pointer (m + 1
// Offsets) in host memory, moved to the device by the first refresh.
template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_seg(const CsrPointers<Scalar>& host, bool tree_reduce,
                                             int seg_length = 0, bool wide = false);

}  // namespace kspmv::cuda

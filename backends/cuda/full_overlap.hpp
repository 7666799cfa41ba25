// CSR-Full-Overlap (Zeng & Zou 2023, Sec. 4.2, Alg. 7/8): the Streamed residency. The matrix stays
// in host memory, pinned in place, and is sent again on every run, big batch by big batch,
// through a ring of a few device buffers, so that the copy of a big batch overlaps the kernels of
// the previous ones and a matrix larger than the device runs.
#pragma once

#include <cstddef>
#include <memory>

#include "backends/cuda/device_spmv.hpp"
#include "kspmv/formats/batch_plan.hpp"

namespace kspmv::cuda {

struct StreamConfig {
  // The most device memory the kernel may hold: the ring, the plan (batches, long-row chunks)
  // and the long rows' work buffer. 0: no limit, slots of one big batch of nnz /
  // params.big_batches each. Under a limit the slots shrink to fit it (more, smaller big
  // batches).
  std::size_t device_bytes = 0;
  // Ring slots (>= 2): the copy of big batch g waits for the kernels of big batch g - slots.
  int slots = 3;
};

// Plans `host` (stream_plan.hpp: batches, long rows, big batches rebased to their slot), pins its
// column and value arrays in place (PinnedRange: no host copy; they must stay alive and unchanged
// while the kernel lives, except through update_values), keeps a pinned copy of the narrowed,
// rebased row pointers (4 bytes per row) and allocates the ring. run() then enqueues, after the
// work on `stream`, the H2D copies of the big batches in order on a copy stream, each into the
// next slot once the kernels of its previous big batch are done, and on `stream` each big
// batch's batch and long-row kernels after its copy. update_values takes the new values from host
// or device memory into a pinned copy of the values (allocated by the first refresh; the caller's
// array is unpinned then). Throws InvalidArgument for bad params or config, MemoryError naming
// the sizes when config.device_bytes cannot hold the smallest ring (slots of the largest batch),
// CudaError when the arrays cannot be pinned.
template <class S>
std::unique_ptr<DeviceSpmv<S>> make_full_overlap(const CsrPointers<S>& host,
                                                 const BatchParams& params = {},
                                                 const StreamConfig& config = {});

}  // namespace kspmv::cuda

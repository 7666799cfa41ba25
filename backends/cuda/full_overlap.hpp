// CSR-Full-Overlap (Zeng & Zou 2023, Sec. 4.2, Alg. 7/8): the Streamed residency. The matrix stays
// in pinned host memory and is sent again on every run, in big batches of equal non-zero counts,
// so that the copy of a big batch overlaps the kernels of the previous ones.
#pragma once

#include <memory>

#include "backends/cuda/device_spmv.hpp"
#include "kspmv/formats/batch_plan.hpp"

namespace kspmv::cuda {

// Copies `host` once into pinned host memory, allocates device buffers for the whole matrix
// (row_ptr, col, val: the copies of a run land there) and uploads the plan (batches, long rows:
// these stay resident). run() then enqueues the H2D copies of the params.big_batches big batches
// in order on a copy stream (after the work on `stream`), and on `stream` each big batch's batch
// and long-row kernels after its copy. update_values takes the new values from host or device
// memory into the pinned copy. Throws UnsupportedError when nnz >= 2^31 and InvalidArgument for
// bad params.
template <class S>
std::unique_ptr<DeviceSpmv<S>> make_full_overlap(const CsrPointers<S>& host,
                                                 const BatchParams& params = {});

}  // namespace kspmv::cuda

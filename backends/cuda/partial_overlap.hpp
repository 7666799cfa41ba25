// CSR-Partial-Overlap (Zeng & Zou 2023, Sec. 4.1, 4.3): batches of the resident CSR staged
// through shared memory by asynchronous copies (cp.async), long rows one block each.
#pragma once

#include <memory>

#include "backends/cuda/device_spmv.hpp"
#include "kspmv/formats/batch_plan.hpp"

namespace kspmv::cuda {

// Plans `host` (the same matrix as `device`) with `params` and uploads the plan to the current
// device. Throws InvalidArgument when the two matrices differ in shape or non-zeros, or when two
// batches of params.max_batch_size do not fit in a block's shared memory.
template <class S>
std::unique_ptr<DeviceSpmv<S>> make_partial_overlap(std::shared_ptr<const DeviceCsr<S>> device,
                                                    const CsrPointers<S>& host,
                                                    const BatchParams& params = {});

}  // namespace kspmv::cuda

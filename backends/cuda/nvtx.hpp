// NVTX ranges for Nsight Systems and Nsight Compute (NVTX3, header-only in the CUDA toolkit),
// beside the Kokkos Tools regions of the same names (kspmv/core/region.hpp): a kspmv set-up
// phase or apply on the CUDA backend shows up on the timeline without a Kokkos tool. With no
// NVTX tool attached a range costs a check of a function pointer and allocates nothing.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include "kspmv/core/region.hpp"

namespace kspmv::cuda {

// An NVTX range named `name` (a string literal) for the lifetime of the object.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

// A phase of the CUDA backend's work: a Kokkos Tools region and an NVTX range of one name.
class Phase {
 public:
  explicit Phase(const char* name) : region_(name), range_(name) {}

 private:
  Region region_;
  NvtxRange range_;
};

}  // namespace kspmv::cuda

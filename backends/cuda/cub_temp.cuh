// Helpers for CUB's device-wide calls, shared by the CUDA sources that sort and scan.
#pragma once

#include <algorithm>
#include <cstddef>

#include "backends/cuda/check.hpp"
#include "backends/cuda/memory.hpp"

namespace kspmv::cuda {

// Device scratch for a CUB call that sizes it first: `call(temp, bytes)`, from the pool of the
// current device, freed after `stream`'s work.
template <class Call>
void with_temp(cudaStream_t stream, Call call) {
  std::size_t bytes = 0;
  KSPMV_CUDA_CHECK(call(nullptr, bytes));
  DeviceBuffer<unsigned char> temp(std::max<std::size_t>(bytes, 1), kPooled, stream);
  KSPMV_CUDA_CHECK(call(temp.data(), bytes));
  temp.free_after(stream);
}

// The bits of the values below `bound` (at most 31: keys hold Ordinals), a radix sort's end_bit.
inline int bit_width(long long bound) {
  int bits = 0;
  while (bits < 31 && (1LL << bits) < bound) ++bits;
  return bits;
}

}  // namespace kspmv::cuda

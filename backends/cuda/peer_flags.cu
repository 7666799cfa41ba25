#include <cuda/atomic>

#include "backends/cuda/check.hpp"
#include "backends/cuda/peer_flags.hpp"

namespace kspmv::cuda {

namespace {

using SystemFlag = ::cuda::atomic_ref<Flag, ::cuda::thread_scope_system>;

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void signal_and_wait_kernel(Flag* epoch, bool next, FlagSet raise, FlagSet wait) {
  Flag e = *epoch;
  if (next) *epoch = ++e;
  __threadfence_system();  // the stream's earlier kernels' writes before the flags
  for (int k = 0; k < raise.count; ++k)
    SystemFlag(*raise.at[k]).store(e, ::cuda::memory_order_release);
  const unsigned long long start = now_ns();
  const auto limit = static_cast<unsigned long long>(kFlagTimeoutSeconds * 1e9);
  for (int k = 0; k < wait.count; ++k)
    while (SystemFlag(*wait.at[k]).load(::cuda::memory_order_acquire) < e)
      if (now_ns() - start > limit) __trap();
}

}  // namespace

void signal_and_wait(Flag* epoch, bool next, const FlagSet& raise, const FlagSet& wait,
                     cudaStream_t stream) {
  if (!next && raise.count == 0 && wait.count == 0) return;
  signal_and_wait_kernel<<<1, 1, 0, stream>>>(epoch, next, raise, wait);
  check_launch("signal_and_wait_kernel");
}

}  // namespace kspmv::cuda

#include <cuda_pipeline_primitives.h>
#include <algorithm>
#include <cstdint>
#include <string>

#include "backends/cuda/check.hpp"
#include "backends/cuda/dispatch.hpp"
#include "backends/cuda/overlap_kernels.hpp"
#include "backends/cuda/warp_reduce.cuh"

namespace kspmv::cuda::overlap {

namespace {

constexpr int kBlock = 256;  // threads per block of both kernels
constexpr int kAlign = 16;   // bytes of the widest cp.async

// Elements of T in a stage for a batch of `max_batch` non-zeros: the batch, widened at both ends
// to 16-byte boundaries, rounded up to whole 16-byte units.
template <class T>
int stage_capacity(Offset max_batch) {
  constexpr int per_unit = kAlign / sizeof(T);
  return static_cast<int>((max_batch + 2 * per_unit + per_unit - 1) / per_unit * per_unit);
}

__device__ inline bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kAlign == 0;
}

// Copies src[begin, end) of an array of n elements into dst, widened to 16-byte boundaries
// where that stays inside [0, n), so that whole 16-byte cp.async can be used; returns the index
// stored at dst[0]. Every thread of the block calls it with the same arguments and issues its
// share of the copies; they complete at the thread's next __pipeline_commit group.
template <class T>
__device__ long long stage_copy(T* dst, const T* src, long long begin, long long end, long long n) {
  constexpr int per_unit = kAlign / sizeof(T);
  const int head =
      static_cast<int>(reinterpret_cast<std::uintptr_t>(src + begin) % kAlign / sizeof(T));
  const int tail =
      static_cast<int>(reinterpret_cast<std::uintptr_t>(src + end) % kAlign / sizeof(T));
  const long long lo = begin >= head ? begin - head : begin;
  const long long hi = tail != 0 && end + (per_unit - tail) <= n ? end + (per_unit - tail) : end;
  const long long count = hi - lo;
  if (aligned16(src + lo) && count % per_unit == 0) {
    for (long long i = static_cast<long long>(threadIdx.x) * per_unit; i < count;
         i += static_cast<long long>(blockDim.x) * per_unit)
      __pipeline_memcpy_async(dst + i, src + lo + i, kAlign);
  } else {
    for (long long i = threadIdx.x; i < count; i += blockDim.x)
      __pipeline_memcpy_async(dst + i, src + lo + i, sizeof(T));
  }
  return lo;
}

// The first index stage_copy stores (recomputed by the consumer of a stage).
template <class T>
__device__ long long stage_begin(const T* src, long long begin) {
  const int head =
      static_cast<int>(reinterpret_cast<std::uintptr_t>(src + begin) % kAlign / sizeof(T));
  return begin >= head ? begin - head : begin;
}

template <class S>
__device__ inline void store(S* y, Ordinal row, S alpha, S sum, S beta) {
  y[row] = beta == S(0) ? alpha * sum : alpha * sum + beta * y[row];
}

// Alg. 5: vectors of V lanes each take a row of the batch; a warp's iterations are uniform so
// that the shuffle reduction always has all 32 lanes. sval[k - val0] and scol[k - col0] hold
// non-zero k of the batch.
template <int V, class S, class O>
__device__ __forceinline__ void vector_compute(const DeviceBatch<O>& b, const O* row_ptr,
                                               const S* sval, long long val0, const Ordinal* scol,
                                               long long col0, S alpha, const S* x, S beta, S* y) {
  const int lane = threadIdx.x % 32;
  const int sub = lane % V;
  const int rows_per_pass = blockDim.x / V;
  for (Ordinal first = b.row_begin + (threadIdx.x / 32) * (32 / V); first < b.row_end;
       first += rows_per_pass) {
    const Ordinal row = first + lane / V;
    S sum = 0;
    if (row < b.row_end) {
      const long long end = __ldg(row_ptr + row + 1);
      for (long long k = static_cast<long long>(__ldg(row_ptr + row)) + sub; k < end; k += V)
        sum += sval[k - val0] * __ldg(x + scol[k - col0]);
    }
    sum = warp_sum<V>(sum);
    if (row < b.row_end && sub == 0) store(y, row, alpha, sum, beta);
  }
}

// Alg. 4: block b runs the contiguous batches [b*per_block, (b+1)*per_block); stage s of shared
// memory receives batch k+1 by asynchronous copies (cp.async, one commit group per batch and
// thread) while the block computes batch k from the other. Block barriers order the stages.
template <class S, class O>
__global__ void __launch_bounds__(kBlock, 4)
    batch_kernel(const DeviceBatch<O>* batches, int count, MatrixRefs<S, O> a, int val_capacity,
                 int col_capacity, S alpha, const S* x, S beta, S* y) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int per_block = (count + gridDim.x - 1) / gridDim.x;
  const int first = blockIdx.x * per_block;
  const int last = min(first + per_block, count);
  if (first >= last) return;  // the whole block leaves

  // Stage s: val_capacity values, then col_capacity column indices (16-byte multiples each).
  const int stage_bytes = val_capacity * int(sizeof(S)) + col_capacity * int(sizeof(Ordinal));
  auto sval = [&](int s) { return reinterpret_cast<S*>(smem + s * stage_bytes); };
  auto scol = [&](int s) {
    return reinterpret_cast<Ordinal*>(smem + s * stage_bytes + val_capacity * int(sizeof(S)));
  };
  auto fetch = [&](int batch) {
    const DeviceBatch<O> f = batches[batch];
    const int s = (batch - first) % 2;
    stage_copy(sval(s), a.val, f.nnz_begin, f.nnz_end, a.nnz);
    stage_copy(scol(s), a.col, f.nnz_begin, f.nnz_end, a.nnz);
  };
  fetch(first);
  __pipeline_commit();
  for (int compute = first; compute < last; ++compute) {
    // The other stage was released by the barrier that ended the previous batch.
    if (compute + 1 < last) fetch(compute + 1);
    __pipeline_commit();       // (empty after the last batch: one group per batch either way)
    __pipeline_wait_prior(1);  // this thread's copies of batch `compute` have landed,
    __syncthreads();           // and every thread's
    const DeviceBatch<O> b = batches[compute];
    const int s = (compute - first) % 2;
    const long long val0 = stage_begin(a.val, b.nnz_begin);
    const long long col0 = stage_begin(a.col, b.nnz_begin);
    // Alg. 6: the batch's vector size.
    with_lanes(b.vector_size, [&](auto v) {
      vector_compute<decltype(v)::value>(b, a.row_ptr, sval(s), val0, scol(s), col0, alpha, x, beta,
                                         y);
    });
    __syncthreads();  // stage s is free for batch compute + 2
  }
}

int current_device_attribute(cudaDeviceAttr attr) {
  int device = 0, value = 0;
  KSPMV_CUDA_CHECK(cudaGetDevice(&device));
  KSPMV_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

}  // namespace

template <class O>
std::vector<DeviceBatch<O>> device_batches(const std::vector<BatchInfo>& batches) {
  std::vector<DeviceBatch<O>> d;
  d.reserve(batches.size());
  for (const BatchInfo& b : batches) {
    d.push_back({b.row_begin, b.row_end, static_cast<O>(b.nnz_begin), static_cast<O>(b.nnz_end),
                 b.vector_size});
  }
  return d;
}

template <class S, class O>
Kernels<S, O>::Kernels(Offset max_batch_size)
    : val_capacity_(stage_capacity<S>(max_batch_size)),
      col_capacity_(stage_capacity<Ordinal>(max_batch_size)),
      shared_bytes_(2 * (std::size_t(val_capacity_) * sizeof(S) + col_capacity_ * sizeof(Ordinal))),
      sm_count_(current_device_attribute(cudaDevAttrMultiProcessorCount)) {
  cudaFuncAttributes attributes{};
  KSPMV_CUDA_CHECK(cudaFuncGetAttributes(&attributes, batch_kernel<S, O>));
  const std::size_t limit = current_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  if (max_batch_size > (Offset(1) << 28) || shared_bytes_ + attributes.sharedSizeBytes > limit) {
    throw InvalidArgument("max_batch_size " + std::to_string(max_batch_size) + " needs " +
                          std::to_string(shared_bytes_) +
                          " bytes of shared memory per block; this device allows " +
                          std::to_string(limit - attributes.sharedSizeBytes));
  }
  // The function's limit, shared by every pipeline on this device: the device's largest (this
  // pipeline's own size would fail the launches of one with larger batches).
  KSPMV_CUDA_CHECK(cudaFuncSetAttribute(batch_kernel<S, O>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(limit - attributes.sharedSizeBytes)));
  int per_sm = 0;
  KSPMV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, batch_kernel<S, O>,
                                                                 kBlock, shared_bytes_));
  resident_blocks_ = std::max(1, per_sm) * sm_count_;
}

template <class S, class O>
void Kernels<S, O>::run_batches(const DeviceBatch<O>* batches, int count, const MatrixRefs<S, O>& a,
                                S alpha, const S* x, S beta, S* y, cudaStream_t stream) const {
  if (count == 0) return;
  const int grid = std::min(count, resident_blocks_);
  batch_kernel<S, O><<<grid, kBlock, shared_bytes_, stream>>>(batches, count, a, val_capacity_,
                                                              col_capacity_, alpha, x, beta, y);
  check_launch("kspmv::cuda::overlap::batch_kernel");
}

template std::vector<DeviceBatch<DeviceOffset>> device_batches(const std::vector<BatchInfo>&);
template std::vector<DeviceBatch<Offset>> device_batches(const std::vector<BatchInfo>&);
template class Kernels<float, DeviceOffset>;
template class Kernels<double, DeviceOffset>;
template class Kernels<float, Offset>;
template class Kernels<double, Offset>;

}  // namespace kspmv::cuda::overlap

#include "backends/cuda/long_rows.hpp"

#include <utility>

#include "backends/cuda/check.hpp"
#include "backends/cuda/warp_reduce.cuh"
#include "kspmv/formats/long_rows.hpp"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;

// One warp per chunk: partial[c] = sum of val*x over the chunk's non-zeros.
template <class Scalar>
__global__ void __launch_bounds__(kBlock)
    chunk_sums(const Ordinal* __restrict__ col, const Scalar* __restrict__ val,
               const DeviceOffset* __restrict__ chunk_begin,
               const DeviceOffset* __restrict__ chunk_end, Ordinal nchunks,
               const Scalar* __restrict__ x, Scalar* __restrict__ partial) {
  const long long chunk = (blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x) / 32;
  if (chunk >= nchunks) return;  // whole warps leave together
  const int lane = threadIdx.x % 32;
  const DeviceOffset end = chunk_end[chunk];
  Scalar sum = 0;
  for (DeviceOffset k = chunk_begin[chunk] + lane; k < end; k += 32)
    sum += __ldg(val + k) * __ldg(x + __ldg(col + k));
  sum = warp_sum<32>(sum);
  if (lane == 0) partial[chunk] = sum;
}

// One warp per long row: adds its chunk sums in chunk order and writes y once.
template <class Scalar>
__global__ void __launch_bounds__(kBlock)
    finish_rows(const Ordinal* __restrict__ rows, const Ordinal* __restrict__ first_chunk,
                Ordinal nrows, const Scalar* __restrict__ partial, bool read_partial, Scalar alpha,
                Scalar beta, Scalar* __restrict__ y) {
  const long long i = (blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x) / 32;
  if (i >= nrows) return;
  const int lane = threadIdx.x % 32;
  Scalar sum = 0;
  if (read_partial) {
    for (Ordinal c = first_chunk[i] + lane; c < first_chunk[i + 1]; c += 32) sum += partial[c];
    sum = warp_sum<32>(sum);
  }
  if (lane == 0) {
    const Ordinal r = rows[i];
    y[r] = beta == Scalar(0) ? alpha * sum : alpha * sum + beta * y[r];
  }
}

int warp_blocks(long long warps) {
  return static_cast<int>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

template <class T, class U>
DeviceBuffer<T> upload_as(const std::vector<U>& v) {
  return upload_vector(std::vector<T>(v.begin(), v.end()));
}

}  // namespace

template <class Scalar>
LongRowPath<Scalar>::LongRowPath(const Offset* host_row_ptr, Ordinal m, std::vector<Ordinal> rows,
                                 Offset chunk_nnz) {
  const LongRowPlan plan = plan_long_rows(host_row_ptr, m, std::move(rows), chunk_nnz);
  nrows_ = static_cast<Ordinal>(plan.rows.size());
  nchunks_ = static_cast<Ordinal>(plan.chunk_begin.size());
  if (nrows_ == 0) return;
  rows_ = upload_as<Ordinal>(plan.rows);
  first_chunk_ = upload_as<Ordinal>(plan.first_chunk);
  chunk_begin_ = upload_as<DeviceOffset>(plan.chunk_begin);  // device offsets: nnz < 2^31
  chunk_end_ = upload_as<DeviceOffset>(plan.chunk_end);
  partial_ = DeviceBuffer<Scalar>(nchunks_);
}

template <class Scalar>
void LongRowPath<Scalar>::run(const CsrPointers<Scalar, DeviceOffset>& a, Scalar alpha,
                              const Scalar* x, Scalar beta, Scalar* y, cudaStream_t stream) const {
  if (nrows_ == 0) return;
  const bool read_partial = alpha != Scalar(0) && nchunks_ > 0;
  if (read_partial) {
    chunk_sums<Scalar><<<warp_blocks(nchunks_), kBlock, 0, stream>>>(
        a.col, a.val, chunk_begin_.data(), chunk_end_.data(), nchunks_, x, partial_.data());
    check_launch("chunk_sums");
  }
  finish_rows<Scalar><<<warp_blocks(nrows_), kBlock, 0, stream>>>(
      rows_.data(), first_chunk_.data(), nrows_, partial_.data(), read_partial, alpha, beta, y);
  check_launch("finish_rows");
}

template <class Scalar>
std::size_t LongRowPath<Scalar>::device_bytes() const {
  return rows_.bytes() + first_chunk_.bytes() + chunk_begin_.bytes() + chunk_end_.bytes() +
         partial_.bytes();
}

template class LongRowPath<float>;
template class LongRowPath<double>;

}  // namespace kspmv::cuda

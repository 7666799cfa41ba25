#include "backends/cuda/long_rows.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "backends/cuda/check.hpp"
#include "backends/cuda/complex.hpp"
#include "backends/cuda/dispatch.hpp"
#include "backends/cuda/long_rows.cuh"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;

// One warp per chunk of [first, last): partial[c*nchunks + chunk] = its sum for each of the K
// vectors (chunk_sum).
template <int K, class Scalar>
__global__ void __launch_bounds__(kBlock)
    chunk_sums(const Ordinal* __restrict__ col, const Scalar* __restrict__ val,
               const Offset* __restrict__ chunk_begin, const Offset* __restrict__ chunk_end,
               Ordinal first, Ordinal last, Ordinal nchunks, const Scalar* __restrict__ x,
               std::size_t ldx, Scalar* __restrict__ partial) {
  const long long chunk = first + (blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x) / 32;
  if (chunk >= last) return;  // whole warps leave together
  Scalar sum[K];
  chunk_sum<K>(col, val, chunk_begin[chunk], chunk_end[chunk], x, ldx, sum);
  if (threadIdx.x % 32 != 0) return;
#pragma unroll
  for (int c = 0; c < K; ++c) partial[c * static_cast<std::size_t>(nchunks) + chunk] = sum[c];
}

// One warp per chunk, each row finished by its last chunk's warp (long_rows.cuh).
template <class Scalar>
__global__ void __launch_bounds__(kBlock)
    one_launch_kernel(LongRowChunks<Scalar> chunks, const Ordinal* __restrict__ col,
                      const Scalar* __restrict__ val, Scalar alpha, const Scalar* __restrict__ x,
                      Scalar beta, Scalar* __restrict__ y) {
  const long long chunk = (blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x) / 32;
  if (chunk < chunks.nchunks) long_row_chunk(chunks, chunk, col, val, x, alpha, beta, y);
}

// One warp per long row of [first, last) of the list: for each of the k vectors, adds the row's
// chunk sums in chunk order and writes Y(row, c) = y[row + c*ldy] once.
template <class Scalar>
__global__ void __launch_bounds__(kBlock)
    finish_rows_kernel(const Ordinal* __restrict__ rows, const Ordinal* __restrict__ first_chunk,
                       Ordinal first, Ordinal last, Ordinal nchunks,
                       const Scalar* __restrict__ partial, bool read_partial, Scalar alpha,
                       Scalar beta, Scalar* __restrict__ y, std::size_t ldy, int k) {
  const long long i = first + (blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x) / 32;
  if (i >= last) return;
  const int lane = threadIdx.x % 32;
  const Ordinal r = rows[i];
  for (int c = 0; c < k; ++c) {
    const Scalar sum = read_partial ? row_total(partial + c * static_cast<std::size_t>(nchunks),
                                                first_chunk[i], first_chunk[i + 1])
                                    : Scalar(0);
    if (lane == 0) {
      Scalar* yr = y + r + c * ldy;
      *yr = beta == Scalar(0) ? alpha * sum : alpha * sum + beta * *yr;
    }
  }
}

int warp_blocks(long long warps) {
  return static_cast<int>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

}  // namespace

template <class Scalar>
LongRowPath<Scalar>::LongRowPath(const Offset* host_row_ptr, Ordinal m, std::vector<Ordinal> rows,
                                 Offset chunk_nnz, int max_vectors, cudaStream_t stream)
    : LongRowPath(plan_long_rows(host_row_ptr, m, std::move(rows), chunk_nnz), max_vectors,
                  stream) {}

template <class Scalar>
LongRowPath<Scalar>::LongRowPath(const LongRowPlan& plan, int max_vectors, cudaStream_t stream)
    : max_vectors_(max_vectors) {
  if (max_vectors < 1 || max_vectors > kMaxVectorsPerPass)
    throw InvalidArgument("long-row path: max_vectors must be in 1.." +
                          std::to_string(kMaxVectorsPerPass) + ", got " +
                          std::to_string(max_vectors));
  nrows_ = static_cast<Ordinal>(plan.rows.size());
  nchunks_ = static_cast<Ordinal>(plan.chunk_begin.size());
  if (nrows_ == 0) return;
  const auto put = [stream](const auto& v) {
    return stream ? upload_vector(v, stream) : upload_vector(v);
  };
  rows_ = put(plan.rows);
  first_chunk_ = put(plan.first_chunk);
  chunk_begin_ = put(plan.chunk_begin);
  chunk_end_ = put(plan.chunk_end);
  partial_ = DeviceBuffer<Scalar>(static_cast<std::size_t>(nchunks_) * max_vectors_, kPooled,
                                  stream ? stream : cudaStreamLegacy);
  std::vector<Ordinal> chunk_row(static_cast<std::size_t>(nchunks_));
  for (Ordinal i = 0; i < nrows_; ++i)
    std::fill(chunk_row.begin() + plan.first_chunk[i], chunk_row.begin() + plan.first_chunk[i + 1],
              i);
  chunk_row_ = put(chunk_row);
  arrivals_ = put(std::vector<unsigned>(static_cast<std::size_t>(nrows_), 0u));
  one_launch_ = std::adjacent_find(plan.first_chunk.begin(), plan.first_chunk.end(),
                                   std::equal_to<>()) == plan.first_chunk.end();
}

template <class Scalar>
void LongRowPath<Scalar>::run(const Ordinal* col, const Scalar* val, Scalar alpha, const Scalar* x,
                              std::size_t ldx, Scalar beta, Scalar* y, std::size_t ldy, int k,
                              cudaStream_t stream) const {
  if (k < 1 || k > max_vectors_)
    throw InvalidArgument("long-row path: " + std::to_string(k) + " vectors, planned for 1.." +
                          std::to_string(max_vectors_));
  if (nrows_ == 0) return;
  const bool read_partial = alpha != Scalar(0) && nchunks_ > 0;
  if (read_partial && k == 1 && one_launch()) {
    one_launch_kernel<Scalar>
        <<<warp_blocks(nchunks_), kBlock, 0, stream>>>(chunks(), col, val, alpha, x, beta, y);
    check_launch("one_launch_kernel");
    return;
  }
  if (read_partial) {
    with_count<kMaxVectorsPerPass>(k, [&](auto kc) {
      chunk_sums<decltype(kc)::value, Scalar><<<warp_blocks(nchunks_), kBlock, 0, stream>>>(
          col, val, chunk_begin_.data(), chunk_end_.data(), 0, nchunks_, nchunks_, x, ldx,
          partial_.data());
    });
    check_launch("chunk_sums");
  }
  finish_rows_kernel<Scalar><<<warp_blocks(nrows_), kBlock, 0, stream>>>(
      rows_.data(), first_chunk_.data(), 0, nrows_, nchunks_, partial_.data(), read_partial, alpha,
      beta, y, ldy, k);
  check_launch("finish_rows_kernel");
}

template <class Scalar>
void LongRowPath<Scalar>::sum_chunks(const Ordinal* col, const Scalar* val, Ordinal first,
                                     Ordinal last, const Scalar* x, cudaStream_t stream) const {
  if (last <= first) return;
  chunk_sums<1, Scalar><<<warp_blocks(last - first), kBlock, 0, stream>>>(
      col, val, chunk_begin_.data(), chunk_end_.data(), first, last, nchunks_, x, 0,
      partial_.data());
  check_launch("chunk_sums");
}

template <class Scalar>
void LongRowPath<Scalar>::finish_rows(Ordinal first, Ordinal last, Scalar alpha, Scalar beta,
                                      Scalar* y, cudaStream_t stream) const {
  if (last <= first) return;
  finish_rows_kernel<Scalar><<<warp_blocks(last - first), kBlock, 0, stream>>>(
      rows_.data(), first_chunk_.data(), first, last, nchunks_, partial_.data(), true, alpha, beta,
      y, 0, 1);
  check_launch("finish_rows_kernel");
}

template <class Scalar>
std::size_t LongRowPath<Scalar>::device_bytes() const {
  return rows_.bytes() + first_chunk_.bytes() + chunk_begin_.bytes() + chunk_end_.bytes() +
         chunk_row_.bytes() + partial_.bytes() + arrivals_.bytes();
}

template <class Scalar>
std::size_t LongRowPath<Scalar>::device_bytes(const LongRowPlan& plan, int max_vectors) {
  if (plan.rows.empty()) return 0;
  const std::size_t rows = plan.rows.size(), chunks = plan.chunk_begin.size();
  return rows * (sizeof(Ordinal) + sizeof(unsigned)) + (rows + 1) * sizeof(Ordinal) +
         chunks * (2 * sizeof(Offset) + sizeof(Ordinal) + max_vectors * sizeof(Scalar));
}

template class LongRowPath<float>;
template class LongRowPath<double>;
template class LongRowPath<Complex<float>>;
template class LongRowPath<Complex<double>>;

}  // namespace kspmv::cuda

#include "backends/cuda/spmm.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/check.hpp"
#include "backends/cuda/complex.hpp"
#include "backends/cuda/device_arrays.hpp"
#include "backends/cuda/dispatch.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "backends/cuda/warp_reduce.cuh"
#include "kspmv/formats/long_rows.hpp"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;

// Paper 4 Alg. 5/6 for K vectors: V lanes per row, strided over the row, each (column, value)
// read once and applied to the K columns of X, K shuffle reductions. Rows longer than
// `long_threshold` are skipped (the long-row path writes them); every lane still reaches the
// shuffles so the full-mask reductions are valid. The row pointer is O (the matrix's 32 or 64
// bits); entry indices are 64-bit so that begin + lane and the stride cannot overflow near 2^31.
template <int V, int K, class O, class S>
__global__ void __launch_bounds__(kBlock)
    csr_spmm_kernel(const O* __restrict__ row_ptr, const Ordinal* __restrict__ col,
                    const S* __restrict__ val, Ordinal m, long long long_threshold, S alpha,
                    const S* __restrict__ x, std::size_t ldx, S beta, S* __restrict__ y,
                    std::size_t ldy) {
  const long long thread = blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x;
  const long long row = thread / V;
  const int lane = threadIdx.x % V;
  long long begin = 0, end = 0;
  bool mine = false;
  if (row < m) {
    begin = __ldg(row_ptr + row);
    end = __ldg(row_ptr + row + 1);
    mine = end - begin <= long_threshold;
    if (!mine) end = begin;
  }
  S sum[K] = {};
  for (long long e = begin + lane; e < end; e += V) {
    const S v = ldg(val + e);
    const S* xj = x + __ldg(col + e);
#pragma unroll
    for (int c = 0; c < K; ++c) sum[c] += v * ldg(xj + c * ldx);
  }
#pragma unroll
  for (int c = 0; c < K; ++c) sum[c] = warp_sum<V>(sum[c]);
  if (mine && lane == 0) {
#pragma unroll
    for (int c = 0; c < K; ++c) {
      S* yi = y + row + c * ldy;
      *yi = beta == S(0) ? alpha * sum[c] : alpha * sum[c] + beta * *yi;
    }
  }
}

bool valid_lanes(int lanes) {
  return lanes >= 1 && lanes <= 32 && (lanes & (lanes - 1)) == 0;
}

template <class S>
void check_arguments(Ordinal m, Ordinal n, S alpha, const S* x, std::size_t ldx, const S* y,
                     std::size_t ldy, int k) {
  if (k < 0) throw InvalidArgument("csr_spmm: k must be >= 0, got " + std::to_string(k));
  if (ldx < static_cast<std::size_t>(n))
    throw InvalidArgument("csr_spmm: ldx " + std::to_string(ldx) + " < the " + std::to_string(n) +
                          " columns of A");
  if (ldy < static_cast<std::size_t>(m))
    throw InvalidArgument("csr_spmm: ldy " + std::to_string(ldy) + " < the " + std::to_string(m) +
                          " rows of A");
  if (k > 0 && m > 0 && !y) throw InvalidArgument("csr_spmm: y is null");
  if (k > 0 && m > 0 && n > 0 && alpha != S(0) && !x) throw InvalidArgument("csr_spmm: x is null");
}

// Y = alpha*A*X + beta*Y in passes of at most kMaxVectorsPerPass columns; rows longer than
// `threshold` go to `long_rows` (null: no row is that long).
template <class S, class O>
void enqueue(const CsrPointers<S, O>& a, int lanes, long long threshold,
             const LongRowPath<S>* long_rows, S alpha, const S* x, std::size_t ldx, S beta, S* y,
             std::size_t ldy, int k, cudaStream_t stream) {
  if (a.m == 0 || k == 0) return;
  if (alpha == S(0)) {
    scale_columns(y, a.m, ldy, k, beta, stream);
    return;
  }
  const long long threads = static_cast<long long>(a.m) * lanes;
  const auto blocks = static_cast<unsigned>((threads + kBlock - 1) / kBlock);
  for (int c0 = 0; c0 < k; c0 += kMaxVectorsPerPass) {
    const int width = std::min(kMaxVectorsPerPass, k - c0);
    const S* xc = x + c0 * ldx;
    S* yc = y + c0 * ldy;
    with_lanes(lanes, [&](auto v) {
      with_count<kMaxVectorsPerPass>(width, [&](auto w) {
        csr_spmm_kernel<decltype(v)::value, decltype(w)::value, O, S>
            <<<blocks, kBlock, 0, stream>>>(a.row_ptr, a.col, a.val, a.m, threshold, alpha, xc, ldx,
                                            beta, yc, ldy);
      });
    });
    check_launch("csr_spmm_kernel");
    if (long_rows) long_rows->run(a.col, a.val, alpha, xc, ldx, beta, yc, ldy, width, stream);
  }
}

// a's row pointer on the host (synchronous copy).
template <class S>
std::vector<Offset> host_row_ptr(const DeviceCsr<S>* a) {
  if (!a) throw InvalidArgument("CsrSpmm: null matrix");
  return download_row_ptr(*a);
}

}  // namespace

template <class S, class O>
void csr_spmm(const CsrPointers<S, O>& a, S alpha, const S* x, std::size_t ldx, S beta, S* y,
              std::size_t ldy, int k, cudaStream_t stream, int lanes) {
  if (!valid_lanes(lanes))
    throw InvalidArgument("csr_spmm: lanes must be a power of two <= 32, got " +
                          std::to_string(lanes));
  check_arguments(a.m, a.n, alpha, x, ldx, y, ldy, k);
  enqueue(a, lanes, std::numeric_limits<long long>::max(),
          static_cast<const LongRowPath<S>*>(nullptr), alpha, x, ldx, beta, y, ldy, k, stream);
}

template <class S>
CsrSpmm<S>::CsrSpmm(std::shared_ptr<const DeviceCsr<S>> a, const Offset* host_row_ptr,
                    CsrVectorConfig config)
    : a_(std::move(a)) {
  if (!a_) throw InvalidArgument("CsrSpmm: null matrix");
  if (!host_row_ptr) throw InvalidArgument("CsrSpmm: null host row pointer");
  if (host_row_ptr[a_->m] != a_->nnz)
    throw InvalidArgument("CsrSpmm: the host row pointer ends at " +
                          std::to_string(host_row_ptr[a_->m]) + ", the matrix holds " +
                          std::to_string(a_->nnz) + " non-zeros");
  const CsrVectorConfig c = resolve_csr_vector_config(host_row_ptr, a_->m, config);
  lanes_ = c.vector_size;
  threshold_ = c.long_row_threshold;
  long_rows_ =
      LongRowPath<S>(host_row_ptr, a_->m, find_long_rows(host_row_ptr, a_->m, c.long_row_threshold),
                     kLongRowChunkNnz, kMaxVectorsPerPass);
}

template <class S>
CsrSpmm<S>::CsrSpmm(std::shared_ptr<const DeviceCsr<S>> a, CsrVectorConfig config)
    : CsrSpmm(a, host_row_ptr(a.get()).data(), config) {}

template <class S>
void CsrSpmm<S>::run(S alpha, const S* x, std::size_t ldx, S beta, S* y, std::size_t ldy, int k,
                     cudaStream_t stream) {
  check_arguments(a_->m, a_->n, alpha, x, ldx, y, ldy, k);
  a_->with_view([&](const auto& a) {
    enqueue(a, lanes_, threshold_, long_rows_.rows() > 0 ? &long_rows_ : nullptr, alpha, x, ldx,
            beta, y, ldy, k, stream);
  });
}

#define KSPMV_INSTANTIATE(S, O)                                                                  \
  template void csr_spmm(const CsrPointers<S, O>&, S, const S*, std::size_t, S, S*, std::size_t, \
                         int, cudaStream_t, int);
KSPMV_INSTANTIATE(float, DeviceOffset)
KSPMV_INSTANTIATE(double, DeviceOffset)
KSPMV_INSTANTIATE(float, Offset)
KSPMV_INSTANTIATE(double, Offset)
#undef KSPMV_INSTANTIATE
template class CsrSpmm<float>;
template class CsrSpmm<double>;
template class CsrSpmm<Complex<float>>;
template class CsrSpmm<Complex<double>>;

}  // namespace kspmv::cuda

#include "backends/cuda/csr_vector.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/check.hpp"
#include "backends/cuda/complex.hpp"
#include "backends/cuda/dispatch.hpp"
#include "backends/cuda/long_rows.cuh"
#include "backends/cuda/vector_ops.hpp"
#include "backends/cuda/warp_reduce.cuh"
#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/analysis/locality.hpp"
#include "kspmv/formats/long_rows.hpp"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;

// Paper 4 Alg. 5/6 without the batching: V lanes per row, strided over the row, shuffle-reduced.
// Rows longer than `long_threshold` are skipped; every lane still reaches the shuffle so the
// full-mask reduction is valid. The first `long_blocks` blocks instead sum the long rows' chunks,
// a warp a chunk, and write those rows (long_rows.cuh), so that one launch writes all of y: on a
// latency-bound matrix a launch is most of the time. The row pointer is O (32 or 64 bits, the
// matrix's); entry indices are 64-bit, so that k + V cannot wrap near 2^31.
template <int V, class O, class Scalar>
__global__ void __launch_bounds__(kBlock)
    csr_vector_kernel(const O* __restrict__ row_ptr, const Ordinal* __restrict__ col,
                      const Scalar* __restrict__ val, Ordinal m, long long long_threshold,
                      LongRowChunks<Scalar> long_rows, unsigned long_blocks, Scalar alpha,
                      const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y) {
  if (blockIdx.x < long_blocks) {  // whole blocks: no warp of a block takes the other branch
    const long long chunk = (blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x) / 32;
    if (chunk < long_rows.nchunks) long_row_chunk(long_rows, chunk, col, val, x, alpha, beta, y);
    return;
  }
  const long long thread =
      (blockIdx.x - long_blocks) * static_cast<long long>(kBlock) + threadIdx.x;
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
  Scalar sum = 0;
  // Unrolled so that the column loads of several steps are in flight before their x gathers.
#pragma unroll 4
  for (long long k = begin + lane; k < end; k += V) sum += ldg(val + k) * ldg(x + __ldg(col + k));
  sum = warp_sum<V>(sum);
  if (mine && lane == 0) y[row] = beta == Scalar(0) ? alpha * sum : alpha * sum + beta * y[row];
}

// O: the offset type of the matrix's row pointer (DeviceCsr::wide).
template <class Scalar, class O>
class CsrVector final : public DeviceSpmv<Scalar> {
 public:
  CsrVector(std::shared_ptr<const DeviceCsr<Scalar>> a, int vector_size, Offset threshold,
            LongRowPath<Scalar> long_rows)
      : a_(std::move(a)),
        vector_size_(vector_size),
        threshold_(threshold),
        long_rows_(std::move(long_rows)) {}

  void run(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y, cudaStream_t stream) override {
    const Ordinal m = a_->m;
    if (m == 0) return;
    if (alpha == Scalar(0) || a_->nnz == 0) {
      scale_vector(y, m, beta, stream);
      return;
    }
    with_lanes(vector_size_,
               [&](auto v) { launch<decltype(v)::value>(alpha, x, beta, y, stream); });
    if (!long_rows_.one_launch())
      long_rows_.run(a_->col.data(), a_->val.data(), alpha, x, beta, y, stream);
  }
  // The values are read from the shared DeviceCsr; the lanes and the long-row plan come from
  // row_ptr alone: nothing to refresh.
  void update_values(const Scalar*, cudaStream_t) override {}
  Kernel kernel() const override { return Kernel::CsrVector; }
  std::size_t extra_device_bytes() const override { return long_rows_.device_bytes(); }

 private:
  template <int V>
  void launch(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y, cudaStream_t stream) {
    const long long threads = static_cast<long long>(a_->m) * V;
    const auto blocks = static_cast<unsigned>((threads + kBlock - 1) / kBlock);
    const bool fused = long_rows_.one_launch();
    const LongRowChunks<Scalar> chunks = fused ? long_rows_.chunks() : LongRowChunks<Scalar>{};
    const auto long_blocks =
        static_cast<unsigned>((chunks.nchunks + kWarpsPerBlock - 1) / kWarpsPerBlock);
    csr_vector_kernel<V, O, Scalar><<<long_blocks + blocks, kBlock, 0, stream>>>(
        a_->template view<O>().row_ptr, a_->col.data(), a_->val.data(), a_->m, threshold_, chunks,
        long_blocks, alpha, x, beta, y);
    check_launch("csr_vector_kernel");
  }

  std::shared_ptr<const DeviceCsr<Scalar>> a_;
  int vector_size_;
  long long threshold_;
  LongRowPath<Scalar> long_rows_;
};

// csr_vector_lanes from the statistics of the rows the main kernel sees.
int lanes_of(const analysis::RowStats& s) {
  return s.nrows > 0 ? analysis::csr_vector_lanes(s.mean_row, s.cv(), s.nrows) : 1;
}

// Whether `host` has many short rows (at least 2^18, at most 4 entries on average) whose columns
// are clustered (x's sectors, analysis::x_sectors, fewer than half its entries): then a thread a
// row, whose neighbouring threads read neighbouring entries of x, beats csr_vector_lanes' 4
// lanes however the lengths spread. Measured (H200, 2026-12-01, a k-mer graph of 6e7 rows in
// its path order): a thread a row 0.855 ms, 4 lanes 1.63 ms; numbered at random (no clustering),
// 3.39 and 3.26.
// `x_sectors` (analysis::x_sectors) is computed only where the rows are many and short enough.
bool short_clustered_rows(Ordinal m, Offset nnz, const std::function<double()>& x_sectors) {
  return m >= (Ordinal(1) << 18) && nnz <= 4 * Offset(m) &&
         x_sectors() < analysis::kClusteredSectors * double(nnz);
}

template <class Scalar>
bool short_clustered_rows(const CsrPointers<Scalar>& host) {
  return host.col != nullptr && short_clustered_rows(host.m, host.nnz(), [&] {
           const std::vector<Ordinal> none;
           return analysis::x_sectors(host.row_ptr, host.col, host.m, none, none, sizeof(Scalar));
         });
}

}  // namespace

CsrVectorConfig resolve_csr_vector_config(const Offset* row_ptr, Ordinal m,
                                          CsrVectorConfig config) {
  const int v = config.vector_size;
  if (v < 0 || v > 32 || (v & (v - 1)) != 0)
    throw InvalidArgument("csr-vector: vector size must be 0 (auto) or a power of two <= 32, got " +
                          std::to_string(v));
  if (config.long_row_threshold < 0)
    throw InvalidArgument("csr-vector: long-row threshold must be >= 0");
  if (v == 0) {
    // The short rows pick V; V sets the default threshold; one refinement step (the threshold
    // of V=32 is the widest, so start there).
    const Offset widest = config.long_row_threshold > 0
                              ? config.long_row_threshold
                              : analysis::csr_vector_long_row_threshold(32);
    config.vector_size = lanes_of(analysis::row_stats(row_ptr, m, 0, widest));
  }
  if (config.long_row_threshold == 0)
    config.long_row_threshold = analysis::csr_vector_long_row_threshold(config.vector_size);
  return config;
}

template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_csr_vector(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                    const CsrPointers<Scalar>& host,
                                                    CsrVectorConfig config, cudaStream_t stream) {
  if (!a || a->m != host.m || a->n != host.n)
    throw InvalidArgument("csr-vector: device and host matrices differ");
  CsrVectorConfig c = resolve_csr_vector_config(host.row_ptr, host.m, config);
  if (config.vector_size == 0 && c.vector_size > 1 && short_clustered_rows(host))
    c = resolve_csr_vector_config(host.row_ptr, host.m, {1, config.long_row_threshold});
  std::vector<Ordinal> rows = find_long_rows(host.row_ptr, host.m, c.long_row_threshold);
  Offset longest = 0;
  for (const Ordinal r : rows) longest = std::max(longest, host.row_ptr[r + 1] - host.row_ptr[r]);
  LongRowPath<Scalar> long_rows(host.row_ptr, host.m, std::move(rows), long_row_chunk_nnz(longest),
                                1, stream);
  return with_offset_type(a->wide(), [&](auto o) -> std::unique_ptr<DeviceSpmv<Scalar>> {
    return std::make_unique<CsrVector<Scalar, decltype(o)>>(
        std::move(a), c.vector_size, c.long_row_threshold, std::move(long_rows));
  });
}

template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_csr_vector(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                    const DevicePlanInput& in) {
  static_assert(kShortRowCut == Offset{128} * 32, "the profile's short rows are V = 32's");
  if (!a) throw InvalidArgument("csr-vector: no device matrix");
  const bool clustered =
      in.x_sectors >= 0 && short_clustered_rows(a->m, a->nnz, [&] { return in.x_sectors; });
  const int lanes = clustered ? 1 : lanes_of(in.profile.short_rows);
  const Offset threshold = analysis::csr_vector_long_row_threshold(lanes);
  LongRowPath<Scalar> path(long_row_bound(in.profile, threshold) > 0
                               ? in.long_rows(threshold, long_row_chunk_nnz(in.profile.all.max_row))
                               : LongRowPlan{},
                           1, in.stream);
  return with_offset_type(a->wide(), [&](auto o) -> std::unique_ptr<DeviceSpmv<Scalar>> {
    return std::make_unique<CsrVector<Scalar, decltype(o)>>(std::move(a), lanes, threshold,
                                                            std::move(path));
  });
}

template std::unique_ptr<DeviceSpmv<float>> make_csr_vector(std::shared_ptr<const DeviceCsr<float>>,
                                                            const DevicePlanInput&);
template std::unique_ptr<DeviceSpmv<double>> make_csr_vector(
    std::shared_ptr<const DeviceCsr<double>>, const DevicePlanInput&);
template std::unique_ptr<DeviceSpmv<float>> make_csr_vector(std::shared_ptr<const DeviceCsr<float>>,
                                                            const CsrPointers<float>&,
                                                            CsrVectorConfig, cudaStream_t);
template std::unique_ptr<DeviceSpmv<double>> make_csr_vector(
    std::shared_ptr<const DeviceCsr<double>>, const CsrPointers<double>&, CsrVectorConfig,
    cudaStream_t);
#define KSPMV_INSTANTIATE(S)                                                                   \
  template std::unique_ptr<DeviceSpmv<S>> make_csr_vector(std::shared_ptr<const DeviceCsr<S>>, \
                                                          const DevicePlanInput&);             \
  template std::unique_ptr<DeviceSpmv<S>> make_csr_vector(                                     \
      std::shared_ptr<const DeviceCsr<S>>, const CsrPointers<S>&, CsrVectorConfig, cudaStream_t);
KSPMV_INSTANTIATE(Complex<float>)
KSPMV_INSTANTIATE(Complex<double>)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv::cuda

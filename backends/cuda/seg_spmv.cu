// segSpMV / segSpMV-r (paper 5, Sec. III) with the per-row sum of segments done on the GPU.
// Kernel 1, one block per tile of kTile padded entries (kTile / seg_length whole segments):
// products into shared memory (thread t reads entries t, t + kBlock, ... of the tile: coalesced),
// segment sums, then y for every row the tile owns whose segments all lie in it. A row crossing
// tiles leaves one partial sum per tile (tail in its first, head in the others); kernel 2 adds
// them, a warp per such row (a block when it crosses many tiles), so a 10^6-nnz row is combined
// in parallel. Every y row is written
// once, by one of the two kernels (plan: seg_tile_plan).
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/search.cuh"
#include "backends/cuda/seg_spmv.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "backends/cuda/warp_reduce.cuh"
#include "kspmv/formats/seg_plan.hpp"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kTile = 1024;  // padded entries per tile
constexpr int kItems = kTile / kBlock;
static_assert(kTile >= kMaxSegLength, "a segment must fit one tile");
// Padded entries staged on the host per upload (bounds host memory at 1e8+ non-zeros).
constexpr Offset kStageEntries = Offset(1) << 23;
// A row crossing more tiles than this is combined by a whole block rather than a warp.
constexpr Ordinal kLongSpanTiles = 8 * 32;

// Shared layout: segment s of the tile at prod[s * (len + 1) ...]: the +1 stride puts the
// entries j of consecutive segments in different banks for the one-thread-per-segment sums.
constexpr int shared_entries(int log2_len) {
  return (kTile >> log2_len) * ((1 << log2_len) + 1) + (kTile >> log2_len);
}

template <class S>
__device__ __forceinline__ S y_update(S alpha, S sum, S beta, const S* y) {
  const S ax = alpha * sum;
  return beta == S(0) ? ax : ax + beta * *y;
}

template <class S, class O, bool kTree>
__global__ void __launch_bounds__(kBlock)
    seg_tile_kernel(const Ordinal* __restrict__ col, const S* __restrict__ val,
                    long long padded_nnz, const O* __restrict__ row_seg_ptr,
                    const Ordinal* __restrict__ own_begin, long long segments, int log2_len,
                    const S* __restrict__ x, S alpha, S beta, S* __restrict__ y,
                    S* __restrict__ head, S* __restrict__ tail) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ S warp_part[2][kBlock / 32];
  const int len = 1 << log2_len;
  const int segs_per_tile = kTile >> log2_len;
  S* prod = reinterpret_cast<S*>(smem);
  S* seg_sum = prod + segs_per_tile * (len + 1);

  const Ordinal b = blockIdx.x;
  const long long tile_seg = static_cast<long long>(b) * segs_per_tile;
  const int nseg =
      static_cast<int>(max(0LL, min(static_cast<long long>(segs_per_tile), segments - tile_seg)));
  const long long tile_end = tile_seg + nseg;

  // Products (Fig. 6): all loads of the thread issued before the first use.
  const long long base = tile_seg << log2_len;
  Ordinal c[kItems];
  S v[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const long long g = base + threadIdx.x + k * kBlock;
    const bool in = g < padded_nnz;
    c[k] = in ? __ldcs(col + g) : 0;
    v[k] = in ? __ldcs(val + g) : S(0);
  }
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int e = threadIdx.x + k * kBlock;
    const S p = base + e < padded_nnz ? v[k] * __ldg(x + c[k]) : S(0);
    prod[(e >> log2_len) * (len + 1) + (e & (len - 1))] = p;
  }
  __syncthreads();

  // Segment sums: a tree per segment (segSpMV-r) or one thread per segment (segSpMV).
  if (kTree) {
    for (int lg = log2_len - 1; lg >= 0; --lg) {
      const int half = 1 << lg;
      for (int q = threadIdx.x; q < (segs_per_tile << lg); q += kBlock) {
        S* p = prod + (q >> lg) * (len + 1) + (q & (half - 1));
        p[0] += p[half];
      }
      __syncthreads();
    }
    for (int s = threadIdx.x; s < segs_per_tile; s += kBlock) seg_sum[s] = prod[s * (len + 1)];
  } else {
    for (int s = threadIdx.x; s < segs_per_tile; s += kBlock) {
      const S* p = prod + s * (len + 1);
      S sum = 0;
      for (int j = 0; j < len; ++j) sum += p[j];
      seg_sum[s] = sum;
    }
  }
  __syncthreads();

  // Rows owned by the tile with all their segments in it (most rows): y written here.
  const Ordinal r0 = own_begin[b], r1 = own_begin[b + 1];
  for (Ordinal i = r0 + threadIdx.x; i < r1; i += kBlock) {
    const long long f = row_seg_ptr[i], l = row_seg_ptr[i + 1];
    if (l > tile_end) continue;  // crosses into the next tile: kernel 2 writes it
    S sum = 0;
    for (long long s = f; s < l; ++s) sum += seg_sum[s - tile_seg];
    y[i] = y_update(alpha, sum, beta, y + i);
  }

  // Partial sums of the rows crossing the tile's edges (block-uniform branch).
  const int head_end = r0 < r1 ? static_cast<int>(row_seg_ptr[r0] - tile_seg) : nseg;
  const int tail_begin = r0 < r1 && row_seg_ptr[r1] > tile_end
                             ? static_cast<int>(row_seg_ptr[r1 - 1] - tile_seg)
                             : nseg;
  if (head_end == 0 && tail_begin == nseg) return;
  S h = 0, t = 0;
  for (int s = threadIdx.x; s < nseg; s += kBlock) {
    if (s < head_end) h += seg_sum[s];
    if (s >= tail_begin) t += seg_sum[s];
  }
  h = warp_sum<32>(h);
  t = warp_sum<32>(t);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    warp_part[0][warp] = h;
    warp_part[1][warp] = t;
  }
  __syncthreads();
  if (warp == 0) {
    h = lane < kBlock / 32 ? warp_part[0][lane] : S(0);
    t = lane < kBlock / 32 ? warp_part[1][lane] : S(0);
    h = warp_sum<32>(h);
    t = warp_sum<32>(t);
    if (lane == 0 && head_end > 0) head[b] = h;
    if (lane == 0 && tail_begin < nseg) tail[b] = t;
  }
}

// Rows crossing tiles: kGroup threads (a warp, or the block for spans over many tiles) add the
// tail of the span's first tile and the heads of the others.
template <class S, int kGroup>
__global__ void __launch_bounds__(kBlock)
    seg_span_kernel(const Ordinal* __restrict__ span_row, const Ordinal* __restrict__ first,
                    const Ordinal* __restrict__ last, Ordinal spans, const S* __restrict__ head,
                    const S* __restrict__ tail, S alpha, S beta, S* __restrict__ y) {
  static_assert(kGroup == 32 || kGroup == kBlock, "a warp or the block per span");
  __shared__ S warp_part[kBlock / 32];
  const long long w = (static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x) / kGroup;
  if (w >= spans) return;  // whole groups leave together
  const int lane = threadIdx.x % kGroup;
  const Ordinal b = first[w], c = last[w];
  S sum = lane == 0 ? tail[b] : S(0);
#pragma unroll 4
  for (Ordinal t = b + 1 + lane; t <= c; t += kGroup) sum += head[t];
  sum = warp_sum<32>(sum);
  if (kGroup > 32) {
    if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x < 32)
      sum = warp_sum<32>(threadIdx.x < kBlock / 32 ? warp_part[threadIdx.x] : S(0));
  }
  if (lane == 0) {
    const Ordinal r = span_row[w];
    y[r] = y_update(alpha, sum, beta, y + r);
  }
}

// Value refresh of the padded layout (Sec. III): padded entry p lies in segment s = p / L of
// the row i with row_seg_ptr[i] <= s < row_seg_ptr[i + 1] and is that row's entry
// p - row_seg_ptr[i] * L, or padding (left 0) past the row's length. A thread per padded entry;
// the row is searched among those of p's tile: from the one before the first the tile owns (it
// may reach into the tile) to the last it owns.
template <class S, class O>
__global__ void seg_refresh_kernel(const Offset* __restrict__ row_ptr,
                                   const O* __restrict__ row_seg_ptr,
                                   const Ordinal* __restrict__ own_begin, long long padded_nnz,
                                   int log2_len, const S* __restrict__ values,
                                   S* __restrict__ val) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < padded_nnz;
       p += stride) {
    const long long b = p / kTile;
    const Ordinal lo = max(own_begin[b] - 1, 0), hi = own_begin[b + 1];
    const Ordinal i = lo + last_at_most(row_seg_ptr + lo, hi - lo, p >> log2_len);
    const long long j = p - (static_cast<long long>(row_seg_ptr[i]) << log2_len);
    if (j < row_ptr[i + 1] - row_ptr[i]) val[p] = values[row_ptr[i] + j];
  }
}

// O: the type of the segment pointers (DeviceOffset when the segments fit, else Offset).
template <class S, class O>
class SegSpmv final : public DeviceSpmv<S> {
 public:
  SegSpmv(const CsrPointers<S>& a, bool tree, int seg_length, const SegSizes& sizes)
      : tree_(tree), m_(a.m) {
    while ((1 << log2_len_) < seg_length) ++log2_len_;
    segments_ = sizes.segments;
    padded_nnz_ = sizes.padded_nnz;

    std::vector<Offset> rsp(std::size_t(a.m) + 1);
    seg_row_pointers(a.row_ptr, a.m, seg_length, rsp.data());
    row_seg_ptr_ = upload_vector(std::vector<O>(rsp.begin(), rsp.end()));
    const SegTilePlan plan = seg_tile_plan(rsp.data(), a.m, kTile >> log2_len_);
    tiles_ = plan.tiles;
    own_begin_ = upload_vector(plan.own_begin);
    SpanList host_spans[2];  // [0]: a warp each, [1]: a block each
    for (std::size_t k = 0; k < plan.span_row.size(); ++k) {
      SpanList& l = host_spans[plan.span_last_tile[k] - plan.span_first_tile[k] > kLongSpanTiles];
      l.row.push_back(plan.span_row[k]);
      l.first.push_back(plan.span_first_tile[k]);
      l.last.push_back(plan.span_last_tile[k]);
    }
    for (int g = 0; g < 2; ++g) spans_[g] = DeviceSpans(host_spans[g]);
    head_ = DeviceBuffer<S>(tiles_);
    tail_ = DeviceBuffer<S>(tiles_);
    upload_padded(a, seg_length, rsp);
    if (a.m > 0) row_ptr_host_.assign(a.row_ptr, a.row_ptr + std::size_t(a.m) + 1);
  }

  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    if (m_ == 0) return;
    if (alpha == S(0) || segments_ == 0) return scale_vector(y, m_, beta, stream);
    const std::size_t smem = shared_entries(log2_len_) * sizeof(S);
    if (tree_) {
      seg_tile_kernel<S, O, true><<<tiles_, kBlock, smem, stream>>>(
          col_.data(), val_.data(), padded_nnz_, row_seg_ptr_.data(), own_begin_.data(), segments_,
          log2_len_, x, alpha, beta, y, head_.data(), tail_.data());
    } else {
      seg_tile_kernel<S, O, false><<<tiles_, kBlock, smem, stream>>>(
          col_.data(), val_.data(), padded_nnz_, row_seg_ptr_.data(), own_begin_.data(), segments_,
          log2_len_, x, alpha, beta, y, head_.data(), tail_.data());
    }
    check_launch("seg_tile_kernel");
    run_spans<32>(spans_[0], alpha, beta, y, stream);
    run_spans<kBlock>(spans_[1], alpha, beta, y, stream);
  }

  // The padded values refilled from `values` (CSR order): the layout is a function of row_ptr
  // and the segment length, so no map is kept, only row_ptr (m + 1 Offsets), on the host until
  // the first refresh uploads it.
  void update_values(const S* values, cudaStream_t stream) override {
    if (padded_nnz_ == 0) return;
    if (!row_ptr_.data()) {
      row_ptr_ = upload_vector(row_ptr_host_);
      row_ptr_host_ = std::vector<Offset>();
    }
    const long long blocks = std::min<long long>((padded_nnz_ + kBlock - 1) / kBlock, 1 << 20);
    seg_refresh_kernel<S, O><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(
        row_ptr_.data(), row_seg_ptr_.data(), own_begin_.data(), padded_nnz_, log2_len_, values,
        val_.data());
    check_launch("seg_refresh_kernel");
  }

  Kernel kernel() const override { return tree_ ? Kernel::SegR : Kernel::Seg; }

  std::size_t extra_device_bytes() const override {
    return col_.bytes() + val_.bytes() + row_seg_ptr_.bytes() + own_begin_.bytes() +
           spans_[0].bytes() + spans_[1].bytes() + head_.bytes() + tail_.bytes() + row_ptr_.bytes();
  }

 private:
  struct SpanList {
    std::vector<Ordinal> row, first, last;
  };
  struct DeviceSpans {
    DeviceSpans() = default;
    explicit DeviceSpans(const SpanList& l)
        : count(static_cast<Ordinal>(l.row.size())),
          row(upload_vector(l.row)),
          first(upload_vector(l.first)),
          last(upload_vector(l.last)) {}
    std::size_t bytes() const { return row.bytes() + first.bytes() + last.bytes(); }
    Ordinal count = 0;
    DeviceBuffer<Ordinal> row, first, last;
  };

  template <int kGroup>
  void run_spans(const DeviceSpans& s, S alpha, S beta, S* y, cudaStream_t stream) const {
    if (s.count == 0) return;
    const long long blocks = (static_cast<long long>(s.count) * kGroup + kBlock - 1) / kBlock;
    seg_span_kernel<S, kGroup><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(
        s.row.data(), s.first.data(), s.last.data(), s.count, head_.data(), tail_.data(), alpha,
        beta, y);
    check_launch("seg_span_kernel");
  }

  // Fills the padded arrays in row chunks of about kStageEntries entries and copies each.
  void upload_padded(const CsrPointers<S>& a, int seg_length, const std::vector<Offset>& rsp) {
    col_ = DeviceBuffer<Ordinal>(padded_nnz_);
    val_ = DeviceBuffer<S>(padded_nnz_);
    std::vector<Ordinal> col;
    std::vector<S> val;
    for (Ordinal r0 = 0; r0 < a.m;) {
      const Offset limit = rsp[r0] + std::max<Offset>(1, kStageEntries / seg_length);
      Ordinal r1 = static_cast<Ordinal>(std::upper_bound(rsp.begin() + r0 + 1, rsp.end(), limit) -
                                        rsp.begin() - 1);
      r1 = std::max(r1, r0 + 1);
      const Offset first = rsp[r0] * seg_length, count = rsp[r1] * seg_length - first;
      col.resize(count);
      val.resize(count);
      seg_fill(a, seg_length, rsp.data(), r0, r1, col.data(), val.data());
      copy_to_device(col_.data() + first, col.data(), count * sizeof(Ordinal));
      copy_to_device(val_.data() + first, val.data(), count * sizeof(S));
      r0 = r1;
    }
  }

  bool tree_;
  Ordinal m_;
  int log2_len_ = 0;
  long long segments_ = 0;
  long long padded_nnz_ = 0;
  Ordinal tiles_ = 0;
  DeviceBuffer<Ordinal> col_;
  DeviceBuffer<S> val_;
  DeviceBuffer<O> row_seg_ptr_;
  DeviceBuffer<Ordinal> own_begin_;
  DeviceSpans spans_[2];
  DeviceBuffer<S> head_, tail_;
  std::vector<Offset> row_ptr_host_;  // until the first refresh
  DeviceBuffer<Offset> row_ptr_;      // from the first refresh on
};

}  // namespace

template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_seg(const CsrPointers<Scalar>& host, bool tree_reduce,
                                             int seg_length, bool wide) {
  if (seg_length == 0)
    seg_length =
        seg_length_min_traffic(host.row_ptr, host.m, int(sizeof(Scalar) + sizeof(Ordinal)));
  const SegSizes sizes = seg_sizes(host.row_ptr, host.m, seg_length);
  return with_offset_type(
      wide || !narrow_offsets(sizes.segments), [&](auto o) -> std::unique_ptr<DeviceSpmv<Scalar>> {
        return std::make_unique<SegSpmv<Scalar, decltype(o)>>(host, tree_reduce, seg_length, sizes);
      });
}

template std::unique_ptr<DeviceSpmv<float>> make_seg(const CsrPointers<float>&, bool, int, bool);
template std::unique_ptr<DeviceSpmv<double>> make_seg(const CsrPointers<double>&, bool, int, bool);

}  // namespace kspmv::cuda

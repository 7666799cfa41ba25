// HBP (paper 3) on the GPU.
// Preprocessing, from the uploaded CSR: the non-empty blocks (a flag per block, two scans for
// the schedule and the combine order; the hash sampling in the same pass), Alg. 2 (a thread per
// row, a warp per row of more than 32 entries, counts its non-zeros in every block), the hash
// placement (a thread block per matrix block: hash histogram, scan, ties
// broken by row in warp order, so that the result equals the host's counting placement), a scan
// of the warp groups' sizes, then the conversion (a warp per group writes its column-major
// elements and add_sign).
// SpMV: Alg. 3, a warp per block with the block's x segment in shared memory; the fixed part
// by static assignment of consecutive (same block column) blocks, the competitive part by an
// atomic ticket (Sec. III-C); then the combine kernel sums the blocks' partial rows.
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <climits>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "backends/cuda/hbp_spmv.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "backends/cuda/warp_reduce.cuh"

namespace kspmv::cuda {

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kBlock = 256;

unsigned grid_for(long long threads) {
  return static_cast<unsigned>(std::max<long long>(1, (threads + kBlock - 1) / kBlock));
}

__device__ __forceinline__ unsigned lanes_below(int lane) {
  return (1u << lane) - 1u;
}

// Calls f(block_col, first, count) for each run of the sorted columns of row i in one block
// column.
template <class F>
__device__ void for_each_run(const DeviceOffset* row_ptr, const Ordinal* col, Ordinal i,
                             Ordinal block_cols, F f) {
  const DeviceOffset end = row_ptr[i + 1];
  for (DeviceOffset k = row_ptr[i]; k < end;) {
    const Ordinal bn = col[k] / block_cols;
    DeviceOffset e = k + 1;
    while (e < end && col[e] / block_cols == bn) ++e;
    f(bn, k, static_cast<int>(e - k));
    k = e;
  }
}

// for_each_run over row i by the whole warp (every lane calls it with the same i), 32 entries
// at a time: a run's first entry is found by ballot, carried across chunks, and f is called by
// the run's last lane.
template <class F>
__device__ void for_each_run_warp(const DeviceOffset* row_ptr, const Ordinal* col, Ordinal i,
                                  Ordinal block_cols, F f) {
  const int lane = threadIdx.x & 31;
  const DeviceOffset end = row_ptr[i + 1];
  Ordinal carry_bn = -1;  // block column of the entry before the chunk (none at the row start)
  DeviceOffset carry_first = 0;
  for (DeviceOffset base = row_ptr[i]; base < end; base += 32) {
    const DeviceOffset k = base + lane;
    const Ordinal bn = k < end ? col[k] / block_cols : -1;
    Ordinal prev = __shfl_up_sync(kFull, bn, 1);
    if (lane == 0) prev = carry_bn;
    const unsigned starts = __ballot_sync(kFull, k < end && bn != prev) & (kFull >> (31 - lane));
    const DeviceOffset first = starts ? base + (31 - __clz(starts)) : carry_first;
    Ordinal next = __shfl_down_sync(kFull, bn, 1);
    if (lane == 31) next = k + 1 < end ? col[k + 1] / block_cols : -1;
    if (k < end && next != bn) f(bn, first, static_cast<int>(k - first + 1));
    carry_bn = __shfl_sync(kFull, bn, 31);
    carry_first = __shfl_sync(kFull, first, 31);
  }
}

// Calls f(row, block_col, first, count) for each run of every row: a thread per row, and the
// whole warp for its rows of more than 32 entries (a thread alone would walk a 10^5-entry row
// serially). Whole warps enter (blockDim.x is a multiple of 32).
template <class F>
__device__ void for_each_row_run(const DeviceOffset* row_ptr, const Ordinal* col, Ordinal m,
                                 Ordinal block_cols, F f) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const Ordinal i = t < m ? static_cast<Ordinal>(t) : 0;
  const bool long_row = t < m && row_ptr[i + 1] - row_ptr[i] > 32;
  if (t < m && !long_row)
    for_each_run(row_ptr, col, i, block_cols,
                 [&](Ordinal bn, DeviceOffset k, int c) { f(i, bn, k, c); });
  for (unsigned longs = __ballot_sync(kFull, long_row); longs != 0; longs &= longs - 1) {
    const Ordinal r = __shfl_sync(kFull, i, __ffs(longs) - 1);
    for_each_run_warp(row_ptr, col, r, block_cols,
                      [&](Ordinal bn, DeviceOffset k, int c) { f(r, bn, k, c); });
  }
}

// Flags of the non-empty blocks, in block-column-major (cm) and block-row-major (rm) order;
// with `shifts`, the hash sampling's histogram over the rows 0, step, 2 * step, ...
__global__ void hbp_mark_kernel(const DeviceOffset* __restrict__ row_ptr,
                                const Ordinal* __restrict__ col, Ordinal m, Ordinal R, Ordinal C,
                                Ordinal N, Ordinal M, Ordinal step, Ordinal* __restrict__ flag_cm,
                                Ordinal* __restrict__ flag_rm,
                                unsigned long long* __restrict__ shifts) {
  for_each_row_run(row_ptr, col, m, M, [&](Ordinal i, Ordinal bn, DeviceOffset, int c) {
    const Ordinal bm = i / N;
    flag_cm[static_cast<long long>(bn) * R + bm] = 1;
    flag_rm[static_cast<long long>(bm) * C + bn] = 1;
    if (shifts && i % step == 0) atomicAdd(&shifts[hbp_shift_needed(c)], 1ull);
  });
}

// After the scans: block ids (schedule order) and the combine lists.
__global__ void hbp_blocks_kernel(const Ordinal* __restrict__ id_cm,
                                  const Ordinal* __restrict__ id_rm, Ordinal R, Ordinal C,
                                  Ordinal* __restrict__ block_row, Ordinal* __restrict__ block_col,
                                  Ordinal* __restrict__ combine_ptr,
                                  Ordinal* __restrict__ combine_block) {
  const long long q = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long dense = static_cast<long long>(R) * C;
  if (q < dense && id_cm[q + 1] != id_cm[q]) {
    block_col[id_cm[q]] = static_cast<Ordinal>(q / R);
    block_row[id_cm[q]] = static_cast<Ordinal>(q % R);
  }
  if (q < dense && id_rm[q + 1] != id_rm[q]) {
    const long long bm = q / C, bn = q % C;
    combine_block[id_rm[q]] = id_cm[bn * R + bm];
  }
  if (q <= R) combine_ptr[q] = id_rm[q * C];
}

// Alg. 2: the non-zero count and first entry of every row in every non-empty block.
__global__ void hbp_count_kernel(const DeviceOffset* __restrict__ row_ptr,
                                 const Ordinal* __restrict__ col, Ordinal m, Ordinal R, Ordinal N,
                                 Ordinal M, const Ordinal* __restrict__ id_cm,
                                 int* __restrict__ count, DeviceOffset* __restrict__ first) {
  for_each_row_run(row_ptr, col, m, M, [&](Ordinal i, Ordinal bn, DeviceOffset k, int c) {
    const Ordinal bm = i / N;
    const long long slot =
        static_cast<long long>(id_cm[static_cast<long long>(bn) * R + bm]) * N + (i - bm * N);
    count[slot] = c;
    first[slot] = k;
  });
}

// Exclusive sum of v over the thread block (blockDim.x = 32 * warps, warps <= 32).
__device__ int block_exclusive_sum(int v, int* warp_total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int inc = v;
  for (int o = 1; o < 32; o *= 2) {
    const int t = __shfl_up_sync(kFull, inc, o);
    if (lane >= o) inc += t;
  }
  if (lane == 31) warp_total[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    const int w = lane < warps ? warp_total[lane] : 0;
    int winc = w;
    for (int o = 1; o < 32; o *= 2) {
      const int t = __shfl_up_sync(kFull, winc, o);
      if (lane >= o) winc += t;
    }
    if (lane < warps) warp_total[lane] = winc - w;  // each lane its own entry
  }
  __syncthreads();
  return inc - v + warp_total[warp];
}

// Table position `slot` (lane `lane` of a full warp; its group `group`) holding a row of `cp`
// non-zeros: zero_row (-1 for an empty row, else the empty rows before it in its group) and,
// from lane 0, the group's size.
__device__ void place_row(int cp, int lane, long long slot, long long group,
                          std::int8_t* __restrict__ zero_row, int* __restrict__ group_nnz) {
  const unsigned empty = __ballot_sync(kFull, cp == 0);
  zero_row[slot] = static_cast<std::int8_t>(cp == 0 ? -1 : __popc(empty & lanes_below(lane)));
  const int sum = warp_sum<32>(cp);
  if (lane == 0) group_nnz[group] = sum;
}

// Sec. III-B, a thread block of N threads per matrix block: thread t hashes row t; rows are
// placed by hash value, ties by row (warps in turn, lanes by rank), as the host's counting
// placement does. Then thread p handles table position p: zero_row and the group sizes.
__global__ void hbp_place_kernel(const int* __restrict__ count, HbpHash hash,
                                 std::uint16_t* __restrict__ output_hash,
                                 std::int8_t* __restrict__ zero_row, int* __restrict__ group_nnz) {
  extern __shared__ int place_smem[];
  __shared__ int warp_total[32];
  const int N = blockDim.x;
  int* offs = place_smem;    // N: histogram, then next free position per hash value
  int* at = place_smem + N;  // N: non-zero count by table position
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const long long base = static_cast<long long>(blockIdx.x) * N;
  const int c = count[base + t];
  const int key = hbp_hash(hash, c);
  offs[t] = 0;
  __syncthreads();
  atomicAdd(&offs[key], 1);
  __syncthreads();
  const int hist = offs[t];
  __syncthreads();
  const int start = block_exclusive_sum(hist, warp_total);
  offs[t] = start;
  __syncthreads();
  const unsigned peers = __match_any_sync(kFull, key);
  const unsigned before = peers & lanes_below(lane);
  int pos = 0;
  for (int w = 0; w < N / 32; ++w) {
    if (warp == w) pos = offs[key] + __popc(before);
    __syncthreads();
    if (warp == w && before == 0) offs[key] += __popc(peers);  // one lane per hash value
    __syncthreads();
  }
  output_hash[base + pos] = static_cast<std::uint16_t>(t);
  at[pos] = c;
  __syncthreads();
  place_row(at[t], lane, base + t, static_cast<long long>(blockIdx.x) * (N / 32) + warp, zero_row,
            group_nnz);
}

// The baselines of Sec. IV-B on the GPU, a thread block per matrix block: sort2D sorts the rows
// by non-zero count with CUB's block radix sort (keys count * 1024 + row: equal counts keep row
// order, as the host's stable sort does); DP2D then runs Regu2D's dynamic programming over the
// sorted counts, a warp per block (lane l tries the group that starts l + 1 rows back) and adds
// its padded work to *dp_padded. zero_row and the group sizes by place_row.
constexpr int kSortThreads = 256, kSortItems = 4;  // block_rows <= 1024
__global__ void __launch_bounds__(kSortThreads)
    hbp_sort_place_kernel(const int* __restrict__ count, int N, bool dp,
                          std::uint16_t* __restrict__ output_hash,
                          std::int8_t* __restrict__ zero_row, int* __restrict__ group_nnz,
                          unsigned long long* __restrict__ dp_padded) {
  using Sort = cub::BlockRadixSort<unsigned, kSortThreads, kSortItems>;
  __shared__ typename Sort::TempStorage temp;
  __shared__ int at[kSortThreads * kSortItems];        // count by table position
  __shared__ int best[kSortThreads * kSortItems + 1];  // DP2D: least padded work of i rows
  const int t = threadIdx.x, lane = t & 31;
  const long long base = static_cast<long long>(blockIdx.x) * N;
  unsigned keys[kSortItems];
  for (int k = 0; k < kSortItems; ++k) {
    const int r = t * kSortItems + k;
    keys[k] = r < N ? static_cast<unsigned>(count[base + r]) << 10 | r : ~0u;
  }
  Sort(temp).Sort(keys);  // thread t now holds table positions t * kSortItems + k
  for (int k = 0; k < kSortItems; ++k) {
    const int pos = t * kSortItems + k;
    if (pos >= N) break;
    output_hash[base + pos] = static_cast<std::uint16_t>(keys[k] & 1023u);
    at[pos] = static_cast<int>(keys[k] >> 10);
  }
  __syncthreads();
  for (int pos = t; pos < N; pos += kSortThreads)  // whole warps: N and the stride are 32k
    place_row(at[pos], lane, base + pos, static_cast<long long>(blockIdx.x) * (N / 32) + pos / 32,
              zero_row, group_nnz);
  if (!dp || t >= 32) return;
  if (t == 0) best[0] = 0;
  __syncwarp();
  for (int i = 1; i <= N; ++i) {
    const int j = i - 1 - t;
    int v = j >= 0 ? best[j] + (i - j) * at[i - 1] : INT_MAX;
    for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_xor_sync(kFull, v, o));
    if (t == 0) best[i] = v;
    __syncwarp();
  }
  if (t == 0) atomicAdd(dp_padded, static_cast<unsigned long long>(best[N]));
}

// The conversion (Sec. III-B), a warp per group: step k writes the k-th element of every row
// of the group that has one, and add_sign, the distance to the row's next element (-1 at its
// last).
template <class S>
__global__ void hbp_fill_kernel(const Ordinal* __restrict__ csr_col, const S* __restrict__ csr_val,
                                const int* __restrict__ count,
                                const DeviceOffset* __restrict__ first,
                                const std::uint16_t* __restrict__ output_hash,
                                const Ordinal* __restrict__ block_col,
                                const DeviceOffset* __restrict__ begin_nnz, long long groups,
                                Ordinal N, Ordinal M, std::uint16_t* __restrict__ col,
                                S* __restrict__ data, std::int8_t* __restrict__ add_sign) {
  const long long gw = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  if (gw >= groups) return;  // whole warps leave together
  const int lane = threadIdx.x & 31, G = N / 32;
  const long long b = gw / G, slot = gw * 32 + lane;  // slot = b * N + (gw % G) * 32 + lane
  const long long row_slot = b * N + output_hash[slot];
  const int c = count[row_slot];
  const DeviceOffset src = c > 0 ? first[row_slot] : 0;
  const Ordinal col_base = block_col[b] * M;
  int max_c = c;
  for (int o = 16; o > 0; o /= 2) max_c = max(max_c, __shfl_xor_sync(kFull, max_c, o));
  DeviceOffset pos = begin_nnz[gw];
  for (int k = 0; k < max_c; ++k) {
    const unsigned active = __ballot_sync(kFull, c > k);
    const unsigned next = __ballot_sync(kFull, c > k + 1);
    if (c > k) {
      const int rank = __popc(active & lanes_below(lane));
      const DeviceOffset dst = pos + rank;
      col[dst] = static_cast<std::uint16_t>(csr_col[src + k] - col_base);
      data[dst] = csr_val[src + k];
      add_sign[dst] = static_cast<std::int8_t>(
          c > k + 1 ? __popc(active) - rank + __popc(next & lanes_below(lane)) : -1);
    }
    pos += __popc(active);
  }
}

template <class S>
struct HbpArgs {
  const Ordinal* block_col;
  const DeviceOffset* begin_nnz;
  const std::uint16_t* col;
  const S* data;
  const std::int8_t* add_sign;
  const std::int8_t* zero_row;
  const std::uint16_t* output_hash;
  Ordinal blocks, n, N, M, per_warp, fixed;
};

// Alg. 3, one warp (the whole thread block) per matrix block. The x segment is reloaded only
// when the block column changes; __syncwarp orders the segment's loads and uses.
template <class S>
__global__ void __launch_bounds__(32)
    hbp_spmv_kernel(HbpArgs<S> a, const S* __restrict__ x, S* __restrict__ partial,
                    Ordinal* __restrict__ ticket) {
  extern __shared__ __align__(16) unsigned char hbp_smem[];
  S* xs = reinterpret_cast<S*>(hbp_smem);
  const int lane = threadIdx.x, G = a.N / 32;
  const Ordinal w = blockIdx.x;
  Ordinal loaded = -1;
  const auto run_block = [&](Ordinal b) {
    const Ordinal bn = a.block_col[b];
    if (bn != loaded) {
      __syncwarp();
      const long long c0 = static_cast<long long>(bn) * a.M;
      const int len = static_cast<int>(min(static_cast<long long>(a.M), a.n - c0));
      for (int i = lane; i < len; i += 32) xs[i] = x[c0 + i];
      __syncwarp();
      loaded = bn;
    }
    const long long base = static_cast<long long>(b) * a.N;
    for (int g = 0; g < G; ++g) {
      const long long slot = base + g * 32 + lane;
      const int z = a.zero_row[slot];
      double sum = 0;  // a lane's row may hold block_cols terms: float sums lose digits
      if (z >= 0) {
        DeviceOffset j = a.begin_nnz[static_cast<long long>(b) * G + g] + lane - z;
        for (;;) {
          sum += static_cast<double>(a.data[j]) * xs[a.col[j]];
          const int step = a.add_sign[j];
          if (step < 0) break;
          j += step;
        }
      }
      partial[base + a.output_hash[slot]] = static_cast<S>(sum);
    }
  };
  for (Ordinal b = w * a.per_warp; b < (w + 1) * a.per_warp; ++b) run_block(b);
  for (;;) {
    Ordinal t = 0;
    if (lane == 0) t = atomicAdd(ticket, 1);
    t = __shfl_sync(kFull, t, 0);
    if (t >= a.blocks - a.fixed) break;
    run_block(a.fixed + t);
  }
}

// The combine part: a thread per row sums the partial rows of the blocks of its block row.
template <class S>
__global__ void hbp_combine_kernel(const Ordinal* __restrict__ combine_ptr,
                                   const Ordinal* __restrict__ combine_block,
                                   const S* __restrict__ partial, Ordinal m, Ordinal N, S alpha,
                                   S beta, S* __restrict__ y) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  const Ordinal r = static_cast<Ordinal>(i / N);
  const long long local = i - static_cast<long long>(r) * N;
  double sum = 0;
  for (Ordinal q = combine_ptr[r]; q < combine_ptr[r + 1]; ++q)
    sum += partial[static_cast<long long>(combine_block[q]) * N + local];
  const S ax = alpha * static_cast<S>(sum);
  y[i] = beta == S(0) ? ax : ax + beta * y[i];
}

// In-place exclusive sum of `n` entries (the last one is the total when its input was 0).
template <class T>
void exclusive_sum(T* v, long long n) {
  std::size_t temp_bytes = 0;
  KSPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, v, v, n));
  DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
  KSPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, v, v, n));
}

template <class T>
std::vector<T> to_host(const DeviceBuffer<T>& d) {
  std::vector<T> v(d.size());
  d.download(v.data());
  return v;
}

template <class S>
class HbpSpmv final : public DeviceSpmv<S> {
 public:
  explicit HbpSpmv(DeviceHbp<S> h) : h_(std::move(h)) {
    const Ordinal N = h_.params.block_rows;
    int device = 0, sms = 0, per_sm = 0, max_smem = 0;
    KSPMV_CUDA_CHECK(cudaGetDevice(&device));
    KSPMV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    KSPMV_CUDA_CHECK(
        cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    smem_ = std::size_t(std::max(1, std::min(h_.params.block_cols, h_.ncols))) * sizeof(S);
    if (smem_ > std::size_t(max_smem))
      throw UnsupportedError("hbp: an x segment of " + std::to_string(smem_) +
                             " bytes exceeds the device's shared memory per block");
    KSPMV_CUDA_CHECK(cudaFuncSetAttribute(
        hbp_spmv_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_)));
    KSPMV_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hbp_spmv_kernel<S>, 32, smem_));
    warps_ = std::max<Ordinal>(1, std::min<Ordinal>(h_.blocks, std::max(1, per_sm) * sms));
    split_ = hbp_split(h_.blocks, warps_, h_.params.fixed_fraction);
    partial_ = DeviceBuffer<S>(std::size_t(h_.blocks) * N);
  }

  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    const Ordinal m = h_.nrows;
    if (m == 0) return;
    if (alpha == S(0) || h_.blocks == 0) return scale_vector(y, m, beta, stream);
    const HbpArgs<S> a{h_.block_col.data(),
                       h_.begin_nnz.data(),
                       h_.col.data(),
                       h_.data.data(),
                       h_.add_sign.data(),
                       h_.zero_row.data(),
                       h_.output_hash.data(),
                       h_.blocks,
                       h_.ncols,
                       h_.params.block_rows,
                       h_.params.block_cols,
                       split_.per_warp,
                       split_.fixed};
    KSPMV_CUDA_CHECK(cudaMemsetAsync(ticket_.data(), 0, ticket_.bytes(), stream));
    hbp_spmv_kernel<S><<<warps_, 32, smem_, stream>>>(a, x, partial_.data(), ticket_.data());
    check_launch("hbp_spmv_kernel");
    hbp_combine_kernel<S><<<grid_for(m), kBlock, 0, stream>>>(
        h_.combine_ptr.data(), h_.combine_block.data(), partial_.data(), m, h_.params.block_rows,
        alpha, beta, y);
    check_launch("hbp_combine_kernel");
  }

  Kernel kernel() const override { return Kernel::Hbp; }
  std::size_t extra_device_bytes() const override {
    return h_.bytes() + partial_.bytes() + ticket_.bytes();
  }

 private:
  DeviceHbp<S> h_;
  std::size_t smem_ = 0;
  Ordinal warps_ = 1;
  HbpSplit split_;
  DeviceBuffer<S> partial_;
  DeviceBuffer<Ordinal> ticket_{1};
};

}  // namespace

template <class Scalar>
DeviceHbp<Scalar> DeviceHbp<Scalar>::upload(const HbpMatrix<Scalar>& h) {
  if (h.nnz() > std::numeric_limits<DeviceOffset>::max())
    throw UnsupportedError("hbp: " + std::to_string(h.nnz()) +
                           " non-zeros; device offsets are 32-bit");
  DeviceHbp d;
  d.nrows = h.nrows, d.ncols = h.ncols, d.blocks = h.blocks();
  d.params = h.params, d.hash = h.hash;
  d.block_row = upload_vector(h.block_row);
  d.block_col = upload_vector(h.block_col);
  d.combine_ptr = upload_vector(h.combine_ptr);
  d.combine_block = upload_vector(h.combine_block);
  d.begin_nnz = upload_vector(std::vector<DeviceOffset>(h.begin_nnz.begin(), h.begin_nnz.end()));
  d.col = upload_vector(h.col);
  d.output_hash = upload_vector(h.output_hash);
  d.data = upload_vector(h.data);
  d.add_sign = upload_vector(h.add_sign);
  d.zero_row = upload_vector(h.zero_row);
  d.dp_padded_nnz = h.dp_padded_nnz;
  return d;
}

template <class Scalar>
HbpMatrix<Scalar> DeviceHbp<Scalar>::download() const {
  HbpMatrix<Scalar> h;
  h.nrows = nrows, h.ncols = ncols, h.params = params, h.hash = hash;
  h.block_row = to_host(block_row);
  h.block_col = to_host(block_col);
  h.combine_ptr = to_host(combine_ptr);
  h.combine_block = to_host(combine_block);
  const std::vector<DeviceOffset> begin = to_host(begin_nnz);
  h.begin_nnz.assign(begin.begin(), begin.end());
  h.col = to_host(col);
  h.output_hash = to_host(output_hash);
  h.data = to_host(data);
  h.add_sign = to_host(add_sign);
  h.zero_row = to_host(zero_row);
  h.dp_padded_nnz = dp_padded_nnz;
  return h;
}

template <class Scalar>
std::size_t DeviceHbp<Scalar>::bytes() const {
  return block_row.bytes() + block_col.bytes() + combine_ptr.bytes() + combine_block.bytes() +
         begin_nnz.bytes() + col.bytes() + output_hash.bytes() + data.bytes() + add_sign.bytes() +
         zero_row.bytes();
}

namespace {

// build_hbp_device with the given hash, or (null) the hash sampled in the mark pass.
template <class Scalar>
DeviceHbp<Scalar> build_on_device(const DeviceCsr<Scalar>& a, const HbpParams& p,
                                  const HbpHash* given, HbpReorder reorder) {
  check_hbp_params(p);
  const Ordinal N = p.block_rows, M = p.block_cols, m = a.m;
  const Ordinal R = (m + N - 1) / N;
  const Ordinal C = static_cast<Ordinal>((static_cast<long long>(a.n) + M - 1) / M);
  const long long dense = static_cast<long long>(R) * C;
  if (dense >= std::numeric_limits<Ordinal>::max())
    throw UnsupportedError("hbp: a grid of " + std::to_string(dense) +
                           " blocks does not fit 32-bit block indices");
  DeviceHbp<Scalar> h;
  h.nrows = m, h.ncols = a.n, h.params = p;

  // Non-empty blocks: flags, then exclusive sums give their ids in both orders.
  DeviceBuffer<Ordinal> id_cm(dense + 1), id_rm(dense + 1);
  KSPMV_CUDA_CHECK(cudaMemset(id_cm.data(), 0, id_cm.bytes()));
  KSPMV_CUDA_CHECK(cudaMemset(id_rm.data(), 0, id_rm.bytes()));
  DeviceBuffer<unsigned long long> shifts(given ? 0 : kHbpMaxShift + 1);
  if (!given) KSPMV_CUDA_CHECK(cudaMemset(shifts.data(), 0, shifts.bytes()));
  if (m > 0) {
    hbp_mark_kernel<<<grid_for(m), kBlock>>>(a.row_ptr.data(), a.col.data(), m, R, C, N, M,
                                             hbp_sample_step(m), id_cm.data(), id_rm.data(),
                                             shifts.data());
    check_launch("hbp_mark_kernel");
  }
  exclusive_sum(id_cm.data(), dense + 1);
  exclusive_sum(id_rm.data(), dense + 1);
  Ordinal blocks = 0;
  KSPMV_CUDA_CHECK(
      cudaMemcpy(&blocks, id_cm.data() + dense, sizeof(Ordinal), cudaMemcpyDeviceToHost));
  if (given) {
    h.hash = *given;
  } else {
    const std::vector<unsigned long long> sampled = to_host(shifts);
    const std::vector<Offset> histogram(sampled.begin(), sampled.end());
    h.hash = hbp_hash_from_shifts(histogram.data(), p);
  }
  if (static_cast<long long>(blocks) * N > std::numeric_limits<Ordinal>::max())
    throw UnsupportedError("hbp: " + std::to_string(blocks) + " blocks of " + std::to_string(N) +
                           " rows do not fit 32-bit table indices");
  h.blocks = blocks;
  const long long slots = static_cast<long long>(blocks) * N, groups = slots / 32;
  h.block_row = DeviceBuffer<Ordinal>(blocks);
  h.block_col = DeviceBuffer<Ordinal>(blocks);
  h.combine_ptr = DeviceBuffer<Ordinal>(std::size_t(R) + 1);
  h.combine_block = DeviceBuffer<Ordinal>(blocks);
  hbp_blocks_kernel<<<grid_for(std::max<long long>(dense, R + 1)), kBlock>>>(
      id_cm.data(), id_rm.data(), R, C, h.block_row.data(), h.block_col.data(),
      h.combine_ptr.data(), h.combine_block.data());
  check_launch("hbp_blocks_kernel");
  id_rm = DeviceBuffer<Ordinal>();

  // Alg. 2.
  DeviceBuffer<int> count(slots);
  DeviceBuffer<DeviceOffset> first(slots);
  if (slots > 0) KSPMV_CUDA_CHECK(cudaMemset(count.data(), 0, count.bytes()));
  if (m > 0 && blocks > 0) {
    hbp_count_kernel<<<grid_for(m), kBlock>>>(a.row_ptr.data(), a.col.data(), m, R, N, M,
                                              id_cm.data(), count.data(), first.data());
    check_launch("hbp_count_kernel");
  }
  id_cm = DeviceBuffer<Ordinal>();

  // Hash placement, group sizes, their scan into begin_nnz.
  h.output_hash = DeviceBuffer<std::uint16_t>(slots);
  h.zero_row = DeviceBuffer<std::int8_t>(slots);
  h.begin_nnz = DeviceBuffer<DeviceOffset>(groups + 1);
  KSPMV_CUDA_CHECK(cudaMemset(h.begin_nnz.data(), 0, h.begin_nnz.bytes()));
  DeviceBuffer<unsigned long long> padded(reorder == HbpReorder::Dp ? 1 : 0);
  if (reorder == HbpReorder::Dp) KSPMV_CUDA_CHECK(cudaMemset(padded.data(), 0, padded.bytes()));
  const Event reorder_start, reorder_end;
  reorder_start.record(nullptr);
  if (blocks > 0 && reorder == HbpReorder::Hash) {
    hbp_place_kernel<<<blocks, N, 2 * N * sizeof(int)>>>(count.data(), h.hash, h.output_hash.data(),
                                                         h.zero_row.data(), h.begin_nnz.data());
    check_launch("hbp_place_kernel");
  } else if (blocks > 0) {
    hbp_sort_place_kernel<<<blocks, kSortThreads>>>(count.data(), N, reorder == HbpReorder::Dp,
                                                    h.output_hash.data(), h.zero_row.data(),
                                                    h.begin_nnz.data(), padded.data());
    check_launch("hbp_sort_place_kernel");
  }
  reorder_end.record(nullptr);
  if (reorder == HbpReorder::Dp) h.dp_padded_nnz = static_cast<Offset>(to_host(padded)[0]);
  exclusive_sum(h.begin_nnz.data(), groups + 1);

  // The conversion.
  h.col = DeviceBuffer<std::uint16_t>(a.nnz);
  h.data = DeviceBuffer<Scalar>(a.nnz);
  h.add_sign = DeviceBuffer<std::int8_t>(a.nnz);
  if (groups > 0) {
    hbp_fill_kernel<Scalar><<<grid_for(groups * 32), kBlock>>>(
        a.col.data(), a.val.data(), count.data(), first.data(), h.output_hash.data(),
        h.block_col.data(), h.begin_nnz.data(), groups, N, M, h.col.data(), h.data.data(),
        h.add_sign.data());
    check_launch("hbp_fill_kernel");
  }
  KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
  h.reorder_ms = reorder_end.elapsed_since(reorder_start);
  return h;
}

}  // namespace

template <class Scalar>
DeviceHbp<Scalar> build_hbp_device(const DeviceCsr<Scalar>& a, const HbpParams& p,
                                   const HbpHash& hash, HbpReorder reorder) {
  return build_on_device(a, p, &hash, reorder);
}

template <class Scalar>
DeviceHbp<Scalar> build_hbp_device(const DeviceCsr<Scalar>& a, const HbpParams& p,
                                   HbpReorder reorder) {
  return build_on_device(a, p, nullptr, reorder);
}

template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_hbp(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                             const CsrPointers<Scalar>& host, const HbpParams& p) {
  if (a && hbp_rows_sorted(host.row_ptr, host.col, host.m))
    return std::make_unique<HbpSpmv<Scalar>>(build_hbp_device(*a, p));
  const HbpHash hash = hbp_sample_hash(host.row_ptr, host.col, host.m, host.n, p);
  return std::make_unique<HbpSpmv<Scalar>>(DeviceHbp<Scalar>::upload(build_hbp(host, p, hash)));
}

template <class Scalar>
bool hbp_worth_timing(const CsrPointers<Scalar>& host, const HbpParams& p) {
  const double slots =
      static_cast<double>(hbp_table_slots(host.row_ptr, host.col, host.m, host.n, p));
  const double csr = static_cast<double>(host.nnz()) * (sizeof(Scalar) + sizeof(Ordinal)) +
                     (static_cast<double>(host.m) + 1) * sizeof(DeviceOffset);
  return slots * (3 + 2 * sizeof(Scalar)) <= csr;
}

template struct DeviceHbp<float>;
template struct DeviceHbp<double>;
template DeviceHbp<float> build_hbp_device(const DeviceCsr<float>&, const HbpParams&,
                                           const HbpHash&, HbpReorder);
template DeviceHbp<double> build_hbp_device(const DeviceCsr<double>&, const HbpParams&,
                                            const HbpHash&, HbpReorder);
template DeviceHbp<float> build_hbp_device(const DeviceCsr<float>&, const HbpParams&, HbpReorder);
template DeviceHbp<double> build_hbp_device(const DeviceCsr<double>&, const HbpParams&, HbpReorder);
template std::unique_ptr<DeviceSpmv<float>> make_hbp(std::shared_ptr<const DeviceCsr<float>>,
                                                     const CsrPointers<float>&, const HbpParams&);
template std::unique_ptr<DeviceSpmv<double>> make_hbp(std::shared_ptr<const DeviceCsr<double>>,
                                                      const CsrPointers<double>&, const HbpParams&);
template bool hbp_worth_timing(const CsrPointers<float>&, const HbpParams&);
template bool hbp_worth_timing(const CsrPointers<double>&, const HbpParams&);

}  // namespace kspmv::cuda

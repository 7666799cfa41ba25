// One grid-stride pass over the rows: narrowing, and sums reduced per block in shared memory,
// then once per block into the global sums with atomics (integers: the same result whatever
// the order).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cuda/check.hpp"
#include "backends/cuda/memory.hpp"
#include "backends/cuda/row_profile.hpp"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kMaxGrid = 1024;
using u64 = unsigned long long;

// One thread's rows of one ProfileSums::Part, in 32-bit counters (a piece has fewer than 2^31
// non-zeros) but the squares.
struct Acc {
  unsigned rows = 0, nnz = 0, empty = 0, min_len = ~0u, max_len = 0, max_row = 0, above[4] = {};
  u64 squares = 0;

  __device__ void count(unsigned len, unsigned row) {              // rows come in ascending order
    if (rows == 0 || len > max_len) max_len = len, max_row = row;  // the first longest row wins
    ++rows, nnz += len, squares += u64{len} * len, empty += len == 0;
    min_len = min(min_len, len);
    above[0] += len > 32, above[1] += len > 256, above[2] += len > 4096, above[3] += len > 65536;
  }
};

// A thread's, then its block's, share of ProfileSums but the bins, as one array: per part
// (all rows, short rows) 8 sums, a minimum and a maximum, then the 6 counts of longer rows.
constexpr int kPartFields = 10, kFields = 2 * kPartFields + 6;
enum class Op { Sum, Min, Max };

__device__ Op op_of(int f) {
  if (f >= 2 * kPartFields) return Op::Sum;
  const int k = f % kPartFields;
  return k == 8 ? Op::Min : k == 9 ? Op::Max : Op::Sum;
}

__device__ u64 combine(Op op, u64 a, u64 b) {
  return op == Op::Sum ? a + b : op == Op::Min ? min(a, b) : max(a, b);
}

__device__ void put(const Acc& a, u64* f) {
  const u64 v[kPartFields] = {a.rows,
                              a.nnz,
                              a.squares,
                              a.empty,
                              a.above[0],
                              a.above[1],
                              a.above[2],
                              a.above[3],
                              a.min_len == ~0u ? ~0ull : a.min_len,
                              a.rows ? (u64{a.max_len} << 32) | (0xffffffffull - a.max_row) : 0};
  for (int k = 0; k < kPartFields; ++k) f[k] = v[k];
}

__device__ u64* target(ProfileSums* s, int f) {
  if (f >= 2 * kPartFields) return &s->longer_than[f - 2 * kPartFields];
  ProfileSums::Part& p = f < kPartFields ? s->all : s->short_rows;
  u64* sums[8] = {&p.rows,     &p.nnz,      &p.squares,  &p.empty,
                  &p.above[0], &p.above[1], &p.above[2], &p.above[3]};
  const int k = f % kPartFields;
  return k == 8 ? &p.min_len : k == 9 ? &p.max_key : sums[k];
}

__global__ void zero_sums(ProfileSums* s) {
  if (threadIdx.x != 0) return;
  *s = ProfileSums{};
  s->all.min_len = s->short_rows.min_len = ~0ull;
}

// Row i gets local[i] (and local[m] from the thread of the last row). Each thread counts its
// rows in registers; warps reduce by shuffles, the block through shared memory, and one thread
// a field adds the block's share into the global sums: with an atomic per field and warp the
// adds queued on the same addresses took longer than the pass itself (H100: 0.24 ms against
// 0.10 for the narrowing alone, 16.7M rows, and more blocks took longer). The length bins go
// through shared memory, one atomic per distinct bin of a warp.
template <class Src>
__global__ void __launch_bounds__(kBlock)
    profile_kernel(const Src* __restrict__ src, Ordinal m, Offset lo, Offset hi,
                   DeviceOffset* __restrict__ local, ProfileSums* __restrict__ out) {
  __shared__ unsigned bins[64];
  __shared__ u64 warps[kBlock / 32][kFields];
  if (threadIdx.x < 64) bins[threadIdx.x] = 0;
  __syncthreads();
  Acc all, shorter;
  unsigned longer[6] = {};
  const int stride = gridDim.x * blockDim.x;  // at most kMaxGrid * kBlock
  const int first = blockIdx.x * blockDim.x + threadIdx.x;
  const int rounds = static_cast<int>((static_cast<long long>(m) + stride - 1) / stride);
  for (int r = 0; r < rounds; ++r) {  // every lane runs every round
    const long long i = first + static_cast<long long>(r) * stride;
    int bin = -1;
    if (i < m) {
      Offset a = src[i], b = src[i + 1];
      if (local) {
        a = min(max(a, lo), hi) - lo;
        b = min(max(b, lo), hi) - lo;
        local[i] = static_cast<DeviceOffset>(a);
        if (i == m - 1) local[m] = static_cast<DeviceOffset>(b);
      }
      const auto len = static_cast<unsigned>(b - a);
      all.count(len, static_cast<unsigned>(i));
      if (len <= static_cast<unsigned>(kShortRowCut)) shorter.count(len, static_cast<unsigned>(i));
      for (int k = 0; k < 6; ++k) longer[k] += len > (128u << k);
      if (len > 0) bin = 31 - __clz(len);
    }
    const int lead = __shfl_sync(0xffffffffu, bin, 0);
    if (__all_sync(0xffffffffu, bin == lead)) {  // the common case: one bin for the warp
      if (lead >= 0 && threadIdx.x % 32 == 0) atomicAdd(&bins[lead], 32u);
    } else {
      const unsigned same = __match_any_sync(0xffffffffu, bin);
      if (bin >= 0 && (threadIdx.x % 32) == __ffs(same) - 1) atomicAdd(&bins[bin], __popc(same));
    }
  }
  u64 f[kFields];
  put(all, f);
  put(shorter, f + kPartFields);
  for (int k = 0; k < 6; ++k) f[2 * kPartFields + k] = longer[k];
  for (int k = 0; k < kFields; ++k) {
    const Op op = op_of(k);
    for (int o = 16; o > 0; o /= 2)
      f[k] = combine(op, f[k], __shfl_down_sync(0xffffffffu, f[k], o));
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32][k] = f[k];
  }
  __syncthreads();
  if (threadIdx.x < kFields) {
    const int k = threadIdx.x;
    const Op op = op_of(k);
    u64 v = warps[0][k];
    for (int w = 1; w < kBlock / 32; ++w) v = combine(op, v, warps[w][k]);
    u64* to = target(out, k);
    if (op == Op::Min)
      atomicMin(to, v);
    else if (op == Op::Max)
      atomicMax(to, v);
    else if (v)
      atomicAdd(to, v);
  }
  if (threadIdx.x < 64 && bins[threadIdx.x])
    atomicAdd(&out->bins[threadIdx.x], u64{bins[threadIdx.x]});
}

__global__ void long_rows_kernel(const DeviceOffset* __restrict__ local, Ordinal m,
                                 Offset threshold, Ordinal* __restrict__ rows,
                                 DeviceOffset* __restrict__ extents, unsigned* __restrict__ count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < m;
       i += stride)
    if (local[i + 1] - local[i] > threshold) {
      const unsigned k = atomicAdd(count, 1u);
      rows[k] = static_cast<Ordinal>(i);
      extents[2 * k] = local[i], extents[2 * k + 1] = local[i + 1];
    }
}

// Each thread's (length, row) keys, the longest row first and the first of equals, reduced in
// its warp and its block, then one atomic per block.
__global__ void __launch_bounds__(kBlock)
    longest_row_kernel(const Offset* __restrict__ src, Ordinal m, u64* __restrict__ key) {
  __shared__ u64 warps[kBlock / 32];
  u64 best = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < m;
       i += stride) {
    const u64 len = min(static_cast<u64>(src[i + 1] - src[i]), 0xffffffffull);
    best = max(best, (len << 32) | (0xffffffffull - static_cast<u64>(i)));
  }
  for (int o = 16; o > 0; o /= 2) best = max(best, __shfl_down_sync(0xffffffffu, best, o));
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = best;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kBlock / 32; ++w) best = max(best, warps[w]);
  atomicMax(key, best);
}

unsigned grid_for(Ordinal m) {
  return static_cast<unsigned>(std::min<long long>((m + kBlock - 1) / kBlock, kMaxGrid));
}

analysis::RowStats stats_of(const ProfileSums::Part& p, Ordinal ncols) {
  analysis::RowStats s;
  s.nrows = static_cast<Ordinal>(p.rows);
  s.ncols = ncols;
  s.nnz = static_cast<Offset>(p.nnz);
  s.empty_rows = static_cast<Ordinal>(p.empty);
  const Offset limits[4] = {32, 256, 4096, 65536};
  for (int t = 0; t < 4; ++t)
    s.rows_above.emplace_back(limits[t], static_cast<Ordinal>(p.above[t]));
  s.power_law_r = std::numeric_limits<double>::quiet_NaN();
  if (p.rows == 0) return s;
  s.min_row = static_cast<Offset>(p.min_len);
  s.max_row = static_cast<Offset>(p.max_key >> 32);
  s.longest_row = static_cast<Ordinal>(0xffffffffull - (p.max_key & 0xffffffffull));
  s.mean_row = double(p.nnz) / double(p.rows);
  // n * sum(k^2) - (sum k)^2, exactly, over n^2: the population variance.
  const auto n = static_cast<unsigned __int128>(p.rows);
  const auto spread = n * p.squares - static_cast<unsigned __int128>(p.nnz) * p.nnz;
  s.stddev_row = std::sqrt(static_cast<double>(spread) / (double(p.rows) * double(p.rows)));
  return s;
}

}  // namespace

void narrow_and_profile(const Offset* src, Ordinal m, Offset lo, Offset hi, DeviceOffset* local,
                        ProfileSums* sums, cudaStream_t stream) {
  zero_sums<<<1, 32, 0, stream>>>(sums);
  check_launch("zero_sums");
  if (m <= 0) {
    if (local) KSPMV_CUDA_CHECK(cudaMemsetAsync(local, 0, sizeof(DeviceOffset), stream));
    return;
  }
  profile_kernel<<<grid_for(m), kBlock, 0, stream>>>(src, m, lo, hi, local, sums);
  check_launch("profile_kernel");
}

void profile_rows(const DeviceOffset* row_ptr, Ordinal m, ProfileSums* sums, cudaStream_t stream) {
  zero_sums<<<1, 32, 0, stream>>>(sums);
  check_launch("zero_sums");
  if (m <= 0) return;
  profile_kernel<<<grid_for(m), kBlock, 0, stream>>>(row_ptr, m, 0, 0, nullptr, sums);
  check_launch("profile_kernel");
}

void load_longest_row_kernel() {
  cudaFuncAttributes a{};  // asking for a kernel's attributes loads it
  KSPMV_CUDA_CHECK(cudaFuncGetAttributes(&a, longest_row_kernel));
}

Ordinal longest_row_on_device(const Offset* src, Ordinal m, unsigned long long* key,
                              cudaStream_t stream) {
  if (m <= 0) return 0;
  KSPMV_CUDA_CHECK(cudaMemsetAsync(key, 0, sizeof *key, stream));
  int sms = 0;
  KSPMV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current_device()));
  const long long blocks = (m + kBlock - 1) / kBlock;  // a few resident blocks per SM at most
  longest_row_kernel<<<static_cast<unsigned>(std::min<long long>(blocks, 8LL * sms)), kBlock, 0,
                       stream>>>(src, m, key);
  check_launch("longest_row_kernel");
  u64 h = 0;
  KSPMV_CUDA_CHECK(cudaMemcpyAsync(&h, key, sizeof h, cudaMemcpyDeviceToHost, stream));
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<Ordinal>(0xffffffffull - (h & 0xffffffffull));
}

RowProfile to_profile(const ProfileSums& sums, Ordinal ncols) {
  RowProfile p;
  p.all = stats_of(sums.all, ncols);
  Offset bins[64];
  for (int b = 0; b < 64; ++b) bins[b] = static_cast<Offset>(sums.bins[b]);
  p.all.power_law_r = analysis::power_law_exponent_of_bins(bins);
  p.short_rows = stats_of(sums.short_rows, ncols);
  for (int k = 0; k < 6; ++k) p.longer_than[k] = static_cast<Ordinal>(sums.longer_than[k]);
  return p;
}

Ordinal long_row_bound(const RowProfile& p, Offset threshold) {
  Ordinal bound = p.all.nrows;
  for (int k = 0; k < 6; ++k)
    if ((Offset{128} << k) <= threshold) bound = p.longer_than[k];
  return bound;
}

std::size_t long_rows_scratch_bytes(Ordinal count) {
  const auto n = static_cast<std::size_t>(std::max<Ordinal>(count, 0));
  return (n * sizeof(Ordinal) + 255) / 256 * 256 +
         (2 * n * sizeof(DeviceOffset) + 255) / 256 * 256 + sizeof(unsigned);
}

LongRowPlan plan_long_rows_on_device(const DeviceOffset* local, Ordinal m, Offset threshold,
                                     Ordinal count, Offset chunk_nnz, cudaStream_t stream,
                                     void* scratch) {
  if (count <= 0 || m <= 0) return plan_long_row_extents({}, {}, {}, chunk_nnz);
  DeviceBuffer<unsigned char> own;
  if (!scratch) {
    own = DeviceBuffer<unsigned char>(long_rows_scratch_bytes(count), kPooled, stream);
    scratch = own.data();
  }
  const auto n = static_cast<std::size_t>(count);
  auto* rows = static_cast<Ordinal*>(scratch);
  auto* extents = reinterpret_cast<DeviceOffset*>(static_cast<unsigned char*>(scratch) +
                                                  (n * sizeof(Ordinal) + 255) / 256 * 256);
  auto* found = reinterpret_cast<unsigned*>(reinterpret_cast<unsigned char*>(extents) +
                                            (2 * n * sizeof(DeviceOffset) + 255) / 256 * 256);
  KSPMV_CUDA_CHECK(cudaMemsetAsync(found, 0, sizeof(unsigned), stream));
  long_rows_kernel<<<grid_for(m), kBlock, 0, stream>>>(local, m, threshold, rows, extents, found);
  check_launch("long_rows_kernel");
  unsigned found_rows = 0;
  KSPMV_CUDA_CHECK(
      cudaMemcpyAsync(&found_rows, found, sizeof found_rows, cudaMemcpyDeviceToHost, stream));
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (found_rows > static_cast<unsigned>(count))
    throw InvalidArgument("long rows: more rows above the threshold than the bound given");
  count = static_cast<Ordinal>(found_rows);
  std::vector<Ordinal> r(count);
  std::vector<DeviceOffset> e(2 * static_cast<std::size_t>(count));
  if (count > 0) {
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(r.data(), rows, r.size() * sizeof(Ordinal),
                                     cudaMemcpyDeviceToHost, stream));
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(e.data(), extents, e.size() * sizeof(DeviceOffset),
                                     cudaMemcpyDeviceToHost, stream));
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  own.free_after(stream);             // read: back to the pool without a wait for the device
  std::vector<Ordinal> order(count);  // the rows found in any order: ascending
  for (Ordinal k = 0; k < count; ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](Ordinal a, Ordinal b) { return r[a] < r[b]; });
  std::vector<Ordinal> sorted(count);
  std::vector<Offset> begin(count), end(count);
  for (Ordinal k = 0; k < count; ++k) {
    sorted[k] = r[order[k]];
    begin[k] = e[2 * order[k]], end[k] = e[2 * order[k] + 1];
  }
  return plan_long_row_extents(std::move(sorted), begin, end, chunk_nnz);
}

}  // namespace kspmv::cuda

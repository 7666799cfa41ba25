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

__device__ int log2_of(u64 k) {
  return 63 - __clzll(k);
}

// One thread's (then one warp's, one block's) share of a ProfileSums::Part.
struct Acc {
  u64 rows = 0, nnz = 0, squares = 0, min_len = ~0ull, max_key = 0, empty = 0, above[4] = {};

  __device__ void count(u64 len, u64 row) {
    ++rows, nnz += len, squares += len * len, empty += len == 0;
    min_len = min(min_len, len);
    max_key = max(max_key, (len << 32) | (0xffffffffull - row));  // the first longest row wins
    const u64 limits[4] = {32, 256, 4096, 65536};
    for (int t = 0; t < 4; ++t) above[t] += len > limits[t];
  }
  __device__ void warp_reduce() {
    for (int o = 16; o > 0; o /= 2) {
      rows += __shfl_down_sync(0xffffffffu, rows, o);
      nnz += __shfl_down_sync(0xffffffffu, nnz, o);
      squares += __shfl_down_sync(0xffffffffu, squares, o);
      empty += __shfl_down_sync(0xffffffffu, empty, o);
      min_len = min(min_len, __shfl_down_sync(0xffffffffu, min_len, o));
      max_key = max(max_key, __shfl_down_sync(0xffffffffu, max_key, o));
      for (int t = 0; t < 4; ++t) above[t] += __shfl_down_sync(0xffffffffu, above[t], o);
    }
  }
  __device__ void add_to(ProfileSums::Part& p) const {
    if (rows == 0) return;
    atomicAdd(&p.rows, rows);
    atomicAdd(&p.nnz, nnz);
    atomicAdd(&p.squares, squares);
    atomicAdd(&p.empty, empty);
    atomicMin(&p.min_len, min_len);
    atomicMax(&p.max_key, max_key);
    for (int t = 0; t < 4; ++t)
      if (above[t]) atomicAdd(&p.above[t], above[t]);
  }
};

__global__ void zero_sums(ProfileSums* s) {
  if (threadIdx.x != 0) return;
  *s = ProfileSums{};
  s->all.min_len = s->short_rows.min_len = ~0ull;
}

// Row i gets local[i] (and local[m] from the thread of the last row); each thread sums its rows
// in registers, each warp reduces by shuffles and adds into the global sums. The length bins go
// through shared memory, one atomic per distinct bin of a warp.
template <class Src>
__global__ void __launch_bounds__(kBlock)
    profile_kernel(const Src* __restrict__ src, Ordinal m, Offset lo, Offset hi,
                   DeviceOffset* __restrict__ local, ProfileSums* __restrict__ out) {
  __shared__ u64 bins[64];
  if (threadIdx.x < 64) bins[threadIdx.x] = 0;
  __syncthreads();
  Acc all, shorter;
  u64 longer[6] = {};
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long rounds = (m + stride - 1) / stride;  // every lane runs every round
  for (long long r = 0; r < rounds; ++r) {
    const long long i = first + r * stride;
    int bin = -1;
    if (i < m) {
      Offset a = src[i], b = src[i + 1];
      if (local) {
        a = min(max(a, lo), hi) - lo;
        b = min(max(b, lo), hi) - lo;
        local[i] = static_cast<DeviceOffset>(a);
        if (i == m - 1) local[m] = static_cast<DeviceOffset>(b);
      }
      const u64 len = static_cast<u64>(b - a);
      all.count(len, static_cast<u64>(i));
      if (len <= static_cast<u64>(kShortRowCut)) shorter.count(len, static_cast<u64>(i));
      for (int k = 0; k < 6; ++k) longer[k] += len > (128ull << k);
      if (len > 0) bin = log2_of(len);
    }
    const unsigned same = __match_any_sync(0xffffffffu, bin);
    if (bin >= 0 && (threadIdx.x % 32) == __ffs(same) - 1)
      atomicAdd(&bins[bin], static_cast<u64>(__popc(same)));
  }
  all.warp_reduce();
  shorter.warp_reduce();
  for (int o = 16; o > 0; o /= 2)
    for (int k = 0; k < 6; ++k) longer[k] += __shfl_down_sync(0xffffffffu, longer[k], o);
  if (threadIdx.x % 32 == 0) {
    all.add_to(out->all);
    shorter.add_to(out->short_rows);
    for (int k = 0; k < 6; ++k)
      if (longer[k]) atomicAdd(&out->longer_than[k], longer[k]);
  }
  __syncthreads();
  if (threadIdx.x < 64 && bins[threadIdx.x]) atomicAdd(&out->bins[threadIdx.x], bins[threadIdx.x]);
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
    own = DeviceBuffer<unsigned char>(long_rows_scratch_bytes(count));
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

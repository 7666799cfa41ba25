// HBP (paper 3) on the GPU.
// Preprocessing, from the uploaded CSR, in work sized by the non-zeros: Alg. 2 (a thread per
// row, a warp per row of more than 32 entries) finds each row's runs of entries in one block
// column, its (row, block) pairs: a first pass counts them (and samples the hash), a scan gives
// combine_ptr, a second pass records each pair's first entry and block column. A stable radix
// sort of the pairs by block column gives the schedule order (rows ascending within a column),
// a scan of the block starts numbers the non-empty blocks. Then the hash placement (a thread
// block per matrix block: hash histogram, scan, ties broken by row in warp order, so that the
// result equals the host's counting placement), a scan of the warp groups' sizes, and the
// conversion (a warp per group writes its column-major elements and add_sign).
// SpMV: Alg. 3 a warp per warp group, the group read as strips between its rows' ends (no
// add_sign chain to follow); thread blocks share a block column's x segment in shared memory
// in their fixed part, warps take the competitive part by an atomic ticket (Sec. III-C), whole
// thread blocks run the largest groups; then the combine kernel sums each row's partial results.
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <climits>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "backends/cuda/dispatch.hpp"
#include "backends/cuda/hbp_spmv.hpp"
#include "backends/cuda/search.cuh"
#include "backends/cuda/vector_ops.hpp"
#include "backends/cuda/warp_reduce.cuh"
#include "kspmv/analysis/kernel_choice.hpp"

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

// Calls f(block_col, first, count, run) for each run of the sorted columns of row i in one block
// column; run numbers the row's runs from 0.
template <class F>
__device__ void for_each_run(const DeviceOffset* row_ptr, const Ordinal* col, Ordinal i,
                             Ordinal block_cols, F f) {
  const DeviceOffset end = row_ptr[i + 1];
  int run = 0;
  for (DeviceOffset k = row_ptr[i]; k < end; ++run) {
    const Ordinal bn = col[k] / block_cols;
    DeviceOffset e = k + 1;
    while (e < end && col[e] / block_cols == bn) ++e;
    f(bn, k, static_cast<int>(e - k), run);
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
  int carry_runs = 0;  // runs ended in the chunks before
  for (DeviceOffset base = row_ptr[i]; base < end; base += 32) {
    const DeviceOffset k = base + lane;
    const Ordinal bn = k < end ? col[k] / block_cols : -1;
    Ordinal prev = __shfl_up_sync(kFull, bn, 1);
    if (lane == 0) prev = carry_bn;
    const unsigned starts = __ballot_sync(kFull, k < end && bn != prev) & (kFull >> (31 - lane));
    const DeviceOffset first = starts ? base + (31 - __clz(starts)) : carry_first;
    Ordinal next = __shfl_down_sync(kFull, bn, 1);
    if (lane == 31) next = k + 1 < end ? col[k + 1] / block_cols : -1;
    const bool last = k < end && next != bn;
    const unsigned ends = __ballot_sync(kFull, last);
    if (last)
      f(bn, first, static_cast<int>(k - first + 1), carry_runs + __popc(ends & lanes_below(lane)));
    carry_bn = __shfl_sync(kFull, bn, 31);
    carry_first = __shfl_sync(kFull, first, 31);
    carry_runs += __popc(ends);
  }
}

// Calls f(row, block_col, first, count, run) for each run of every row: a thread per row, and
// the whole warp for its rows of more than 32 entries (a thread alone would walk a 10^5-entry
// row serially). Whole warps enter (blockDim.x is a multiple of 32).
template <class F>
__device__ void for_each_row_run(const DeviceOffset* row_ptr, const Ordinal* col, Ordinal m,
                                 Ordinal block_cols, F f) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const Ordinal i = t < m ? static_cast<Ordinal>(t) : 0;
  const bool long_row = t < m && row_ptr[i + 1] - row_ptr[i] > 32;
  if (t < m && !long_row)
    for_each_run(row_ptr, col, i, block_cols,
                 [&](Ordinal bn, DeviceOffset k, int c, int run) { f(i, bn, k, c, run); });
  for (unsigned longs = __ballot_sync(kFull, long_row); longs != 0; longs &= longs - 1) {
    const Ordinal r = __shfl_sync(kFull, i, __ffs(longs) - 1);
    for_each_run_warp(row_ptr, col, r, block_cols,
                      [&](Ordinal bn, DeviceOffset k, int c, int run) { f(r, bn, k, c, run); });
  }
}

// Alg. 2, first pass: the number of (row, block) pairs of each row into pairs[i]; with `shifts`,
// the hash sampling's histogram over the rows 0, step, 2 * step, ...
__global__ void hbp_count_pairs_kernel(const DeviceOffset* __restrict__ row_ptr,
                                       const Ordinal* __restrict__ col, Ordinal m, Ordinal M,
                                       Ordinal step, Ordinal* __restrict__ pairs,
                                       unsigned long long* __restrict__ shifts) {
  for_each_row_run(row_ptr, col, m, M, [&](Ordinal i, Ordinal, DeviceOffset, int c, int) {
    atomicAdd(&pairs[i], 1);
    if (shifts && i % step == 0) atomicAdd(&shifts[hbp_shift_needed(c)], 1ull);
  });
}

// Alg. 2, second pass: pair q (row-major) starts at entry first[q], in block column key[q].
__global__ void hbp_pairs_kernel(const DeviceOffset* __restrict__ row_ptr,
                                 const Ordinal* __restrict__ col, Ordinal m, Ordinal M,
                                 const Ordinal* __restrict__ combine_ptr,
                                 DeviceOffset* __restrict__ first, unsigned* __restrict__ key,
                                 Ordinal* __restrict__ pair) {
  for_each_row_run(row_ptr, col, m, M, [&](Ordinal i, Ordinal bn, DeviceOffset k, int, int run) {
    const Ordinal q = combine_ptr[i] + run;
    first[q] = k;
    key[q] = static_cast<unsigned>(bn);
    pair[q] = q;
  });
}

// Slot s of the schedule order (pair[s], in block column bn[s]) starts a block when its block
// column or block row differs from slot s - 1's: flag[s] = 1.
__global__ void hbp_block_flags_kernel(const unsigned* __restrict__ bn,
                                       const Ordinal* __restrict__ pair,
                                       const Ordinal* __restrict__ combine_ptr, Ordinal m,
                                       Ordinal slots, Ordinal N, Ordinal* __restrict__ flag) {
  const long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (s >= slots) return;
  const Ordinal bm = last_at_most(combine_ptr, m, pair[s]) / N;
  flag[s] = s == 0 || bn[s] != bn[s - 1] || last_at_most(combine_ptr, m, pair[s - 1]) / N != bm;
}

// After the scan of the flags (id[s]: the blocks starting before slot s): each block's row,
// column and first table slot.
__global__ void hbp_blocks_kernel(const unsigned* __restrict__ bn, const Ordinal* __restrict__ pair,
                                  const Ordinal* __restrict__ combine_ptr, Ordinal m, Ordinal slots,
                                  Ordinal N, const Ordinal* __restrict__ id,
                                  Ordinal* __restrict__ block_row, Ordinal* __restrict__ block_col,
                                  Ordinal* __restrict__ table_ptr) {
  const long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (s == slots) table_ptr[id[s]] = slots;
  if (s >= slots || id[s + 1] == id[s]) return;
  block_row[id[s]] = last_at_most(combine_ptr, m, pair[s]) / N;
  block_col[id[s]] = static_cast<Ordinal>(bn[s]);
  table_ptr[id[s]] = static_cast<Ordinal>(s);
}

// Block b's warp groups: ceil(rows / 32) into groups[b].
__global__ void hbp_group_counts_kernel(const Ordinal* __restrict__ table_ptr, Ordinal blocks,
                                        Ordinal* __restrict__ groups) {
  const long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (b < blocks) groups[b] = (table_ptr[b + 1] - table_ptr[b] + 31) / 32;
}

// Keeps the stream busy for `ns` nanoseconds of the device's global timer: an event recorded
// behind it is stamped when the next kernel can start, so that a pair of events around that
// kernel times the kernel and not the host's launch of it (the GPU is idle before it otherwise).
__global__ void hbp_delay_kernel(unsigned long long ns) {
  unsigned long long t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
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

// The sizes of a block's warp groups from the counts by table position (`at`, 0 past the
// block's rows), by whole warps: the warp of positions [pos - lane, pos - lane + 32) writes
// group (pos - lane) / 32 of the block when it holds a row.
__device__ void group_sizes(const int* at, int pos, int lane, int rows, Ordinal first_group,
                            DeviceOffset* __restrict__ group_nnz) {
  if (pos - lane >= rows) return;  // warp-uniform
  const int sum = warp_sum<32>(at[pos]);
  if (lane == 0) group_nnz[first_group + pos / 32] = sum;
}

// Sec. III-B, a thread block of N threads per matrix block: thread t hashes the block's row t
// (t < rows, rows ascending); rows are placed by hash value, ties by row (the warps holding rows
// in turn, lanes by rank), as the host's counting placement does. Then the warp groups' sizes.
__global__ void hbp_place_kernel(const Ordinal* __restrict__ table_ptr,
                                 const Ordinal* __restrict__ pair,
                                 const DeviceOffset* __restrict__ first, HbpHash hash,
                                 const Ordinal* __restrict__ group_ptr,
                                 Ordinal* __restrict__ output_hash,
                                 DeviceOffset* __restrict__ group_nnz) {
  extern __shared__ int place_smem[];
  __shared__ int warp_total[32];
  const int N = blockDim.x;
  int* offs = place_smem;    // N: histogram, then next free position per hash value
  int* at = place_smem + N;  // N: non-zero count by table position
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const Ordinal t0 = table_ptr[blockIdx.x];
  const int rows = table_ptr[blockIdx.x + 1] - t0;
  const bool row = t < rows;
  const Ordinal q = row ? pair[t0 + t] : 0;
  const int c = row ? static_cast<int>(first[q + 1] - first[q]) : 0;
  const int key = row ? hbp_hash(hash, c) : -1;
  offs[t] = 0;
  at[t] = 0;
  __syncthreads();
  if (row) atomicAdd(&offs[key], 1);
  __syncthreads();
  const int hist = offs[t];
  __syncthreads();
  const int start = block_exclusive_sum(hist, warp_total);
  offs[t] = start;
  __syncthreads();
  const unsigned peers = __match_any_sync(kFull, key);
  const unsigned before = peers & lanes_below(lane);
  int pos = 0;
  for (int w = 0; w * 32 < rows; ++w) {  // block-uniform: a block lists only rows with entries
    if (warp == w && row) pos = offs[key] + __popc(before);
    __syncthreads();
    if (warp == w && row && before == 0) offs[key] += __popc(peers);  // one lane per hash value
    __syncthreads();
  }
  if (row) {
    output_hash[t0 + pos] = q;
    at[pos] = c;
  }
  __syncthreads();
  group_sizes(at, t, lane, rows, group_ptr[blockIdx.x], group_nnz);
}

// The baselines of Sec. IV-B on the GPU, a thread block per matrix block: sort2D sorts the rows
// by non-zero count with CUB's block radix sort (keys count * 1024 + row: equal counts keep row
// order, as the host's stable sort does); DP2D then runs Regu2D's dynamic programming over the
// sorted counts, a warp per block (lane l tries the group that starts l + 1 rows back) and adds
// its padded work to *dp_padded. Then the warp groups' sizes.
constexpr int kSortThreads = 256, kSortItems = 4;  // block_rows <= 1024
__global__ void __launch_bounds__(kSortThreads)
    hbp_sort_place_kernel(const Ordinal* __restrict__ table_ptr, const Ordinal* __restrict__ pair,
                          const DeviceOffset* __restrict__ first, int N, bool dp,
                          const Ordinal* __restrict__ group_ptr, Ordinal* __restrict__ output_hash,
                          DeviceOffset* __restrict__ group_nnz,
                          unsigned long long* __restrict__ dp_padded) {
  using Sort = cub::BlockRadixSort<unsigned, kSortThreads, kSortItems>;
  __shared__ typename Sort::TempStorage temp;
  __shared__ int at[kSortThreads * kSortItems];        // count by table position
  __shared__ int best[kSortThreads * kSortItems + 1];  // DP2D: least padded work of i rows
  const int t = threadIdx.x, lane = t & 31;
  const Ordinal t0 = table_ptr[blockIdx.x];
  const int rows = table_ptr[blockIdx.x + 1] - t0;
  unsigned keys[kSortItems];
  for (int k = 0; k < kSortItems; ++k) {
    const int r = t * kSortItems + k;
    const Ordinal q = r < rows ? pair[t0 + r] : 0;
    keys[k] = r < rows ? static_cast<unsigned>(first[q + 1] - first[q]) << 10 | r : ~0u;
  }
  Sort(temp).Sort(keys);  // thread t now holds table positions t * kSortItems + k
  for (int k = 0; k < kSortItems; ++k) {
    const int pos = t * kSortItems + k;
    if (pos < rows) output_hash[t0 + pos] = pair[t0 + (keys[k] & 1023u)];
    at[pos] = pos < rows ? static_cast<int>(keys[k] >> 10) : 0;
  }
  __syncthreads();
  for (int pos = t; pos < N; pos += kSortThreads)  // whole warps: N and the stride are 32k
    group_sizes(at, pos, lane, rows, group_ptr[blockIdx.x], group_nnz);
  if (!dp || t >= 32) return;
  if (t == 0) best[0] = 0;
  __syncwarp();
  for (int i = 1; i <= rows; ++i) {
    const int j = i - 1 - t;
    int v = j >= 0 ? best[j] + (i - j) * at[i - 1] : INT_MAX;
    for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_xor_sync(kFull, v, o));
    if (t == 0) best[i] = v;
    __syncwarp();
  }
  if (t == 0) atomicAdd(dp_padded, static_cast<unsigned long long>(best[rows]));
}

// The conversion (Sec. III-B), a warp per group (global group gw: group gw - group_ptr[b] of
// block b): step k writes the k-th element of every row of the group that has one, and
// add_sign, the distance to the row's next element (-1 at its last); with `source`, each
// element's position in the CSR (what a value refresh gathers through).
template <class S>
__global__ void hbp_fill_kernel(
    const Ordinal* __restrict__ csr_col, const S* __restrict__ csr_val,
    const DeviceOffset* __restrict__ first, const Ordinal* __restrict__ output_hash,
    const Ordinal* __restrict__ table_ptr, const Ordinal* __restrict__ block_col,
    const Ordinal* __restrict__ group_ptr, const DeviceOffset* __restrict__ group_begin,
    Ordinal blocks, Ordinal groups, Ordinal M, std::uint16_t* __restrict__ col,
    S* __restrict__ data, std::int8_t* __restrict__ add_sign, DeviceOffset* __restrict__ source) {
  const long long gw = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  if (gw >= groups) return;  // whole warps leave together
  const int lane = threadIdx.x & 31;
  const Ordinal b = last_at_most(group_ptr, blocks, gw);
  const Ordinal slot = table_ptr[b] + static_cast<Ordinal>(gw - group_ptr[b]) * 32 + lane;
  const bool row = slot < table_ptr[b + 1];
  const Ordinal q = row ? output_hash[slot] : 0;
  const int c = row ? static_cast<int>(first[q + 1] - first[q]) : 0;
  const DeviceOffset src = row ? first[q] : 0;
  const Ordinal col_base = block_col[b] * M;
  int max_c = c;
  for (int o = 16; o > 0; o /= 2) max_c = max(max_c, __shfl_xor_sync(kFull, max_c, o));
  DeviceOffset pos = group_begin[gw];
  for (int k = 0; k < max_c; ++k) {
    const unsigned active = __ballot_sync(kFull, c > k);
    const unsigned next = __ballot_sync(kFull, c > k + 1);
    if (c > k) {
      const int rank = __popc(active & lanes_below(lane));
      const DeviceOffset dst = pos + rank;
      col[dst] = static_cast<std::uint16_t>(csr_col[src + k] - col_base);
      data[dst] = csr_val[src + k];
      if (source) source[dst] = src + k;
      add_sign[dst] = static_cast<std::int8_t>(
          c > k + 1 ? __popc(active) - rank + __popc(next & lanes_below(lane)) : -1);
    }
    pos += __popc(active);
  }
}

// What the SpMV kernel reads: the format, and its plan (group_info, dest, the slices).
template <class S>
struct HbpArgs {
  const Ordinal* block_col;
  const Ordinal* group_ptr;
  const DeviceOffset* begin_nnz;
  const std::uint16_t* col;
  const S* data;
  const std::int8_t* add_sign;
  const int4* group_info;  // by warp group: its first table slot, rows, block column
  // By table slot, where its row's sum goes: output_hash (its partial result), or ~row for a row
  // of one pair, whose y the SpMV part writes itself (the combine part has nothing to add).
  const Ordinal* dest;
  // The groups of more than slice_nnz elements ("heavy") are cut into slices of slice_nnz
  // elements, one warp each: slices[t] = {group, slice of it, heavy group h, its slices};
  // heavy_ends[32 h + i]: the element ending h's i-th row to end; scratch[32 h + lane]: the row
  // sums of h's finished slices; slices_done[h]: how many (both cleared by h's last slice).
  const int4* slices;
  const DeviceOffset* heavy_ends;
  double* scratch;
  unsigned* slices_done;
  S alpha, beta;
  S* y;
  Ordinal groups, slice_count, n, M;
  Ordinal per_block, competitive;  // blocks per thread block (fixed part); first competitive group
  DeviceOffset slice_nnz;
  Ordinal ticket_groups;
  double shared_x;  // x segment in shared memory for runs of >= shared_x entries per x entry
};

// dest[s] (see HbpArgs) for every table slot s.
__global__ void hbp_dest_kernel(const Ordinal* __restrict__ output_hash,
                                const Ordinal* __restrict__ combine_ptr, Ordinal m, Ordinal slots,
                                Ordinal* __restrict__ dest) {
  const long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (s >= slots) return;
  const Ordinal q = output_hash[s], i = last_at_most(combine_ptr, m, q);
  dest[s] = combine_ptr[i + 1] - combine_ptr[i] == 1 ? ~i : q;
}

// Where a row's sum of one block goes (HbpArgs::dest).
template <class S>
__device__ __forceinline__ void write_row(const HbpArgs<S>& a, Ordinal dest, double sum,
                                          S* __restrict__ partial) {
  if (dest >= 0) {
    partial[dest] = static_cast<S>(sum);
    return;
  }
  const S ax = a.alpha * static_cast<S>(sum);
  a.y[~dest] = a.beta == S(0) ? ax : ax + a.beta * a.y[~dest];
}

// Per-group plan: group_info[g] = {first table slot, rows, block column, 0}.
__global__ void hbp_group_info_kernel(const Ordinal* __restrict__ table_ptr,
                                      const Ordinal* __restrict__ group_ptr,
                                      const Ordinal* __restrict__ block_col, Ordinal blocks,
                                      int4* __restrict__ info) {
  const long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (b >= blocks) return;
  for (Ordinal g = group_ptr[b]; g < group_ptr[b + 1]; ++g) {
    const Ordinal slot0 = table_ptr[b] + (g - group_ptr[b]) * 32;
    info[g] = make_int4(slot0, min(32, table_ptr[b + 1] - slot0), block_col[b], 0);
  }
}

template <bool kSharedX, class S>
__device__ __forceinline__ double x_at(const S* xs, int c) {
  if constexpr (kSharedX) return xs[c];
  return __ldg(xs + c);
}

// A warp group's descriptor (group_info and its elements [e0, e1)), loaded ahead of its run.
struct GroupRef {
  int4 info;
  DeviceOffset e0, e1;
};

template <class S>
__device__ __forceinline__ GroupRef load_group(const HbpArgs<S>& a, Ordinal g) {
  return {a.group_info[g], a.begin_nnz[g], a.begin_nnz[g + 1]};
}

// Groups of at most this many chunks of 32 elements are staged: read at once, their products
// kept in shared memory.
constexpr int kStagedChunks = 4;

// ceil(2^16 / w) for w = 1..32: floor(d / w) = d * kInverse[w] >> 16 exactly for 0 <= d < 2048
// (checked for every d and w), without a division.
__constant__ unsigned kInverse[33] = {0,    65536, 32768, 21846, 16384, 13108, 10923, 9363, 8192,
                                      7282, 6554,  5958,  5462,  5042,  4682,  4370,  4096, 3856,
                                      3641, 3450,  3277,  3121,  2979,  2850,  2731,  2622, 2521,
                                      2428, 2341,  2260,  2185,  2115,  2048};

__device__ __forceinline__ int small_quotient(int d, int w) {
  return static_cast<int>(static_cast<unsigned>(d) * kInverse[w] >> 16);
}

// The rows' ends of the group of elements [e0, e1) (add_sign -1, one per row) in element order,
// into ends[0, rows): a warp scans add_sign.
__device__ void find_ends(const std::int8_t* __restrict__ add_sign, DeviceOffset e0,
                          DeviceOffset e1, DeviceOffset* ends) {
  const int lane = threadIdx.x & 31;
  int count = 0;
#pragma unroll 4
  for (DeviceOffset base = e0; base < e1; base += 32) {
    const DeviceOffset e = base + lane;
    const bool end = e < e1 && add_sign[e] < 0;
    const unsigned m = __ballot_sync(kFull, end);
    if (end) ends[count + __popc(m & lanes_below(lane))] = e;
    count += __popc(m);
  }
  __syncwarp();
}

// A strip's partial sums (lane t < stride holds its terms t, t + stride, ...; stride a multiple
// of width) gathered per rank by a strided shuffle tree, then handed to the lane of each rank:
// this lane's share when it is active (`on`) with rank `rank`, else 0.
__device__ __forceinline__ double owners_share(double acc, int width, int stride, int rank,
                                               bool on) {
  const int lane = threadIdx.x & 31;
  for (int o = width; o < stride; o *= 2) {  // lane r < width: the terms of the r-th lane
    const double v = __shfl_down_sync(kFull, acc, o);
    if (lane + o < stride) acc += v;
  }
  const double mine = __shfl_sync(kFull, acc, rank & 31);
  return on ? mine : 0;
}

// Sums the elements [lo, hi) of the warp group whose elements start at e0, read as strips (Alg.
// 3, see run_group): term(e) is element e's product, ends[0, rows) its rows' ends in order.
// Returns this lane's share of its row (lane < rows).
template <class Term>
__device__ __forceinline__ double sum_strips(int rows, DeviceOffset e0, DeviceOffset lo,
                                             DeviceOffset hi, const DeviceOffset* ends, Term term) {
  const int lane = threadIdx.x & 31;
  unsigned active = rows == 32 ? kFull : (1u << rows) - 1u;
  int width = rows;
  DeviceOffset pos = e0;
  double sum = 0;  // a row may hold block_cols terms: float sums lose digits
  for (int i = 0; i < rows && pos < hi;) {
    const DeviceOffset last = pos + (ends[i] - pos) / width * width;  // the step of the next end
    const DeviceOffset stop = last + width;
    const int stride = small_quotient(32, width) * width;  // lane t: every stride-th from pos + t
    double acc = 0;
    if (lane < stride && stop > lo) {
      DeviceOffset e = pos + lane;  // this lane's first element at or after lo
      if (e < lo) e += (lo - e + stride - 1) / stride * stride;
#pragma unroll 4
      for (; e < min(stop, hi); e += stride) acc += term(e);
    }
    const bool on = active >> lane & 1u;
    const int rank = __popc(active & lanes_below(lane));
    sum += owners_share(acc, width, stride, rank, on);
    // The ends in step `last`, ends[i, i + their count), as a mask of the ranks whose rows end.
    const bool in_step = i + lane < rows && ends[i + lane] < stop;
    const unsigned ending = __reduce_or_sync(kFull, in_step ? 1u << (ends[i + lane] - last) : 0u);
    i += __popc(__ballot_sync(kFull, in_step));
    active &= ~__ballot_sync(kFull, on && (ending >> rank & 1u));
    width = __popc(active);
    pos = stop;
  }
  return sum;
}

// A staged group (n <= 32 * kStagedChunks elements, products in buf[0, n)): the same walk with
// the rows' ends as bit masks (bit t of mask[k]: element 32 k + t ends its row) and no division.
__device__ __forceinline__ double sum_staged(int rows, const double* buf,
                                             const unsigned (&mask)[kStagedChunks]) {
  const int lane = threadIdx.x & 31;
  const auto is_end = [&](int k) {
    unsigned w = mask[0];
#pragma unroll
    for (int c = 1; c < kStagedChunks; ++c)
      if (k >= 32 * c) w = mask[c];
    return (w >> (k & 31) & 1u) != 0;
  };
  const auto next_end = [&](int k) {  // the first end at or after k (there is one)
    int found = 0;
#pragma unroll
    for (int c = kStagedChunks - 1; c >= 0; --c) {
      const unsigned w = k >= 32 * (c + 1) ? 0u
                         : k <= 32 * c     ? mask[c]
                                           : mask[c] >> (k & 31) << (k & 31);
      if (w != 0) found = 32 * c + __ffs(w) - 1;
    }
    return found;
  };
  unsigned active = rows == 32 ? kFull : (1u << rows) - 1u;
  int width = rows, pos = 0;
  double sum = 0;
  while (active != 0) {
    const int last = pos + small_quotient(next_end(pos) - pos, width) * width;
    const int stop = last + width;
    const int stride = small_quotient(32, width) * width;
    double acc = 0;
    if (lane < stride)
      for (int k = pos + lane; k < stop; k += stride) acc += buf[k];
    const bool on = active >> lane & 1u;
    const int rank = __popc(active & lanes_below(lane));
    sum += owners_share(acc, width, stride, rank, on);
    active &= ~__ballot_sync(kFull, on && is_end(last + rank));
    width = __popc(active);
    pos = stop;
  }
  return sum;
}

// Alg. 3 on warp group `r` by one warp. The group is column-major (Sec. III-B): at each step
// every active lane (row) has one element, in lane order, and a row leaves after its last element
// (add_sign -1). Instead of following add_sign from element to element (one dependent load per
// step), the warp first finds the rows' ends (one per row, in order, into `ends`); between two
// steps holding ends the active lanes stay the same, so the steps form a dense strip of `width`
// columns whose element pos + s * width + r belongs to the r-th active lane. Each strip is summed
// with independent, coalesced loads (lanes cover 32 / width steps at once, then a strided shuffle
// tree gathers each row's terms) and handed to its rows' lanes. A group of at most kStagedChunks
// chunks is staged: every load at once, x next, the products into `buf` (this warp's, shared
// memory) and the ends as ballot masks, so that it costs two memory round trips. xs: the block's
// x segment (shared memory, kSharedX) or x.
template <bool kSharedX, class S>
__device__ void run_group(const HbpArgs<S>& a, const GroupRef& r, const S* x, const S* xs,
                          DeviceOffset* ends, double* buf, S* __restrict__ partial) {
  const int lane = threadIdx.x & 31;
  const int rows = r.info.y;
  const DeviceOffset e0 = r.e0, e1 = r.e1;
  if (!kSharedX) xs = x + static_cast<long long>(r.info.z) * a.M;
  const Ordinal dest = lane < rows ? a.dest[r.info.x + lane] : 0;
  double sum;
  if (e1 - e0 <= 32 * kStagedChunks) {
    const int n = e1 - e0;
    unsigned mask[kStagedChunks];
#pragma unroll
    for (int k = 0; k < kStagedChunks; ++k) {  // independent loads, then the x they need
      const DeviceOffset e = e0 + 32 * k + lane;
      const bool in = 32 * k + lane < n;
      const S v = in ? __ldg(a.data + e) : S(0);
      const int c = in ? __ldg(a.col + e) : 0;
      mask[k] = __ballot_sync(kFull, in && __ldg(a.add_sign + e) < 0);
      if (in) buf[32 * k + lane] = static_cast<double>(v) * x_at<kSharedX>(xs, c);
    }
    __syncwarp();
    sum = sum_staged(rows, buf, mask);
  } else {
    find_ends(a.add_sign, e0, e1, ends);
    sum = sum_strips(rows, e0, e0, e1, ends, [&](DeviceOffset e) {
      return static_cast<double>(__ldg(a.data + e)) * x_at<kSharedX>(xs, __ldg(a.col + e));
    });
  }
  if (lane < rows) write_row(a, dest, sum, partial);
  __syncwarp();  // ends and buf are rewritten by the next group
}

// Slice t (HbpArgs::slices) of a heavy group by one warp: its share of each row, from the group's
// ends found at setup, added into the group's scratch; the group's last slice to finish writes
// the rows and clears the scratch and the count for the next run.
template <class S>
__device__ void run_slice(const HbpArgs<S>& a, Ordinal t, const S* x, DeviceOffset* ends,
                          S* __restrict__ partial) {
  const int lane = threadIdx.x & 31;
  const int4 s = a.slices[t];
  const GroupRef r = load_group(a, s.x);
  const int rows = r.info.y;
  ends[lane] = a.heavy_ends[32 * s.z + lane];
  __syncwarp();
  const S* xs = x + static_cast<long long>(r.info.z) * a.M;
  const DeviceOffset lo = r.e0 + s.y * a.slice_nnz, hi = min(r.e1, lo + a.slice_nnz);
  const double sum = sum_strips(rows, r.e0, lo, hi, ends, [&](DeviceOffset e) {
    return static_cast<double>(__ldg(a.data + e)) * __ldg(xs + __ldg(a.col + e));
  });
  double* scratch = a.scratch + 32 * s.z;
  if (lane < rows) atomicAdd(scratch + lane, sum);
  __threadfence();
  __syncwarp();
  unsigned done = 0;
  if (lane == 0) done = atomicAdd(a.slices_done + s.z, 1u);
  if (__shfl_sync(kFull, done, 0) == static_cast<unsigned>(s.w) - 1) {  // the last slice
    __threadfence();
    if (lane < rows)
      write_row(a, a.dest[r.info.x + lane],
                __longlong_as_double(static_cast<long long>(
                    atomicExch(reinterpret_cast<unsigned long long*>(scratch + lane), 0ull))),
                partial);
    if (lane == 0) a.slices_done[s.z] = 0;
  }
  __syncwarp();  // ends is rewritten next
}

// The SpMV part (Sec. III-C), thread blocks of W warps. First the heavy groups' slices, spread
// over all warps. Then the fixed part: thread block c runs blocks [c * per_block, (c + 1) *
// per_block) (schedule order: block-column runs), its warps taking the run's groups in turn, with
// the run's x segment in shared memory (kSegment) where the run holds >= shared_x entries per x
// entry. Then the competitive part: warps take ticket_groups groups at a time by ticket
// (tickets[0]). A warp loads its next group's descriptor (and its next ticket) before running the
// current one; the last thread block to finish (tickets[1] counts them) resets the tickets.
// kRegisters 48: 40 warps per SM for W = 8, a few bytes spilled; 64: 32 warps, no spills. Shared
// memory: the staging buffers (32 * kStagedChunks per warp), ends (32 per warp), the x segment.
template <class S, bool kSegment, int kRegisters>
__global__ void __maxnreg__(kRegisters)
    hbp_spmv_kernel(HbpArgs<S> a, const S* __restrict__ x, S* __restrict__ partial,
                    Ordinal* __restrict__ tickets) {
  extern __shared__ __align__(16) unsigned char hbp_smem[];
  const int W = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  double* buf = reinterpret_cast<double*>(hbp_smem) + warp * 32 * kStagedChunks;
  DeviceOffset* ends = reinterpret_cast<DeviceOffset*>(reinterpret_cast<double*>(hbp_smem) +
                                                       W * 32 * kStagedChunks) +
                       warp * 32;
  S* xs = reinterpret_cast<S*>(hbp_smem + W * 32 * (8 * kStagedChunks + 4));  // 16-byte aligned
  for (Ordinal t = blockIdx.x * W + warp; t < a.slice_count; t += gridDim.x * W)
    run_slice(a, t, x, ends, partial);
  const auto mine = [&](const GroupRef& r) { return r.e1 - r.e0 <= a.slice_nnz; };
  for (Ordinal b = blockIdx.x * a.per_block, b_end = b + a.per_block; b < b_end;) {
    Ordinal r = b_end;  // the run of block b's column
    bool shared = false;
    if (kSegment) {
      const Ordinal bn = a.block_col[b];
      r = b + 1 + last_at_most(a.block_col + b, b_end - b, bn);
      const long long c0 = static_cast<long long>(bn) * a.M;
      const int len = static_cast<int>(min(static_cast<long long>(a.M), a.n - c0));
      shared = a.begin_nnz[a.group_ptr[r]] - a.begin_nnz[a.group_ptr[b]] >= a.shared_x * len;
      if (shared) {
        __syncthreads();  // the previous run's readers are done
        for (int i = threadIdx.x; i < len; i += blockDim.x) xs[i] = x[c0 + i];
        __syncthreads();
      }
    }
    const Ordinal g1 = a.group_ptr[r];
    GroupRef next{};
    if (a.group_ptr[b] + warp < g1) next = load_group(a, a.group_ptr[b] + warp);
    for (Ordinal g = a.group_ptr[b] + warp; g < g1; g += W) {
      const GroupRef cur = next;
      if (g + W < g1) next = load_group(a, g + W);
      if (!mine(cur)) continue;
      if (kSegment && shared)
        run_group<true>(a, cur, x, xs, ends, buf, partial);
      else
        run_group<false>(a, cur, x, xs, ends, buf, partial);
    }
    b = r;
  }
  Ordinal t = 0;
  if (lane == 0) t = atomicAdd(&tickets[0], a.ticket_groups);
  for (Ordinal g0 = a.competitive + __shfl_sync(kFull, t, 0); g0 < a.groups;) {
    if (lane == 0) t = atomicAdd(&tickets[0], a.ticket_groups);  // the next ticket, ahead
    const Ordinal g1 = min(a.groups, g0 + a.ticket_groups);
    GroupRef next = load_group(a, g0);
    for (Ordinal g = g0; g < g1; ++g) {
      const GroupRef cur = next;
      if (g + 1 < g1) next = load_group(a, g + 1);
      if (mine(cur)) run_group<false>(a, cur, x, xs, ends, buf, partial);
    }
    g0 = a.competitive + __shfl_sync(kFull, t, 0);
  }
  __syncthreads();  // the last thread block past its tickets resets them for the next run
  if (threadIdx.x == 0 && atomicAdd(&tickets[1], 1) == gridDim.x - 1) tickets[0] = tickets[1] = 0;
}

// The rows' ends of every heavy group (HbpArgs::heavy_ends), a warp each, at setup.
__global__ void hbp_heavy_ends_kernel(const std::int8_t* __restrict__ add_sign,
                                      const DeviceOffset* __restrict__ begin_nnz,
                                      const Ordinal* __restrict__ heavy, Ordinal count,
                                      DeviceOffset* __restrict__ heavy_ends) {
  const long long h = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  if (h >= count) return;  // whole warps
  find_ends(add_sign, begin_nnz[heavy[h]], begin_nnz[heavy[h] + 1], heavy_ends + 32 * h);
}

// The combine part: V lanes per row sum its partial results (contiguous, by block column); rows
// of one pair were written by the SpMV part.
template <int V, class S>
__global__ void __launch_bounds__(kBlock)
    hbp_combine_kernel(const Ordinal* __restrict__ combine_ptr, const S* __restrict__ partial,
                       Ordinal m, S alpha, S beta, S* __restrict__ y) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long i = t / V;
  double sum = 0;
  const bool mine = i < m && combine_ptr[i + 1] - combine_ptr[i] != 1;
  if (mine)
    for (Ordinal q = combine_ptr[i] + static_cast<Ordinal>(t % V); q < combine_ptr[i + 1]; q += V)
      sum += partial[q];
  sum = warp_sum<V>(sum);
  if (mine && t % V == 0) {
    const S ax = alpha * static_cast<S>(sum);
    y[i] = beta == S(0) ? ax : ax + beta * y[i];
  }
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
  // `sources`: the CSR position of each element of h.data, for value refresh.
  HbpSpmv(DeviceHbp<S> h, std::vector<DeviceOffset> sources, const HbpLaunch& launch)
      : h_(std::move(h)), sources_host_(std::move(sources)) {
    check_hbp_launch(launch);
    const Ordinal groups = static_cast<Ordinal>(h_.begin_nnz.size()) - 1;
    const std::vector<DeviceOffset> begin = to_host(h_.begin_nnz);
    const std::vector<Ordinal> group_ptr = to_host(h_.group_ptr);
    const double shared_x = configure(launch, begin, group_ptr);
    const HbpSplit split = hbp_split(h_.blocks, grid_, h_.params.fixed_fraction);
    partial_ = DeviceBuffer<S>(h_.output_hash.size());
    KSPMV_CUDA_CHECK(cudaMemset(tickets_.data(), 0, tickets_.bytes()));
    info_ = DeviceBuffer<int4>(groups);  // each group's first table slot, rows, block column
    if (h_.blocks > 0) {
      hbp_group_info_kernel<<<grid_for(h_.blocks), kBlock>>>(
          h_.table_ptr.data(), h_.group_ptr.data(), h_.block_col.data(), h_.blocks, info_.data());
      check_launch("hbp_group_info_kernel");
    }
    const DeviceOffset slice_nnz = static_cast<DeviceOffset>(std::min<Offset>(
        launch.slice_nnz > 0 ? launch.slice_nnz : std::numeric_limits<DeviceOffset>::max(),
        std::numeric_limits<DeviceOffset>::max()));
    plan_slices(begin, slice_nnz);
    plan_rows();
    const double mean_group = groups > 0 ? double(begin[groups]) / groups : 1;
    const Ordinal per_ticket =
        launch.ticket_groups > 0
            ? launch.ticket_groups
            : static_cast<Ordinal>(std::clamp(std::lround(512 / mean_group), 1l, 32l));
    args_ = HbpArgs<S>{h_.block_col.data(),
                       h_.group_ptr.data(),
                       h_.begin_nnz.data(),
                       h_.col.data(),
                       h_.data.data(),
                       h_.add_sign.data(),
                       info_.data(),
                       dest_.data(),
                       slices_.data(),
                       heavy_ends_.data(),
                       scratch_.data(),
                       slices_done_.data(),
                       S(0),
                       S(0),
                       nullptr,
                       groups,
                       static_cast<Ordinal>(slices_.size()),
                       h_.ncols,
                       h_.params.block_cols,
                       split.per_warp,
                       group_ptr[split.fixed],
                       slice_nnz,
                       per_ticket,
                       shared_x};
    // The plan's kernels ran on the legacy default stream: the first run may come on a
    // non-blocking stream, which would not wait for them (dest_ read before it is written).
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }

  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    const Ordinal m = h_.nrows;
    if (m == 0) return;
    if (alpha == S(0) || h_.blocks == 0) return scale_vector(y, m, beta, stream);
    HbpArgs<S> a = args_;
    a.alpha = alpha, a.beta = beta, a.y = y;
    kernel_<<<grid_, threads_, smem_, stream>>>(a, x, partial_.data(), tickets_.data());
    check_launch("hbp_spmv_kernel");
    if (!combined_) return;  // every row has one pair: the SpMV part wrote y
    with_lanes(lanes_, [&](auto v) { combine<decltype(v)::value>(alpha, beta, y, stream); });
  }

  // The elements gathered from `values` (CSR order) through their CSR positions (nnz
  // DeviceOffsets), kept on the host from the build and uploaded by the first refresh.
  void update_values(const S* values, cudaStream_t stream) override {
    const Ordinal nnz = static_cast<Ordinal>(h_.data.size());  // < 2^31 (DeviceHbp::upload)
    if (nnz == 0) return;
    if (!sources_.data()) {
      sources_ = upload_vector(sources_host_);
      sources_host_ = std::vector<DeviceOffset>();
    }
    gather_entries(h_.data.data(), values, sources_.data(), nnz, stream);
  }

  Kernel kernel() const override { return Kernel::Hbp; }
  std::size_t extra_device_bytes() const override {
    return h_.bytes() + partial_.bytes() + tickets_.bytes() + sources_.bytes() + info_.bytes() +
           dest_.bytes() + slices_.bytes() + heavy_ends_.bytes() + scratch_.bytes() +
           slices_done_.bytes();
  }

 private:
  // The launch: threads, shared memory, the kernel and its persistent grid. Sec. III-A sizes the
  // x segment for the shared memory; it is reserved where some block column is dense enough for
  // it and it costs no resident thread blocks, else x is read through the caches. Returns the
  // shared_x the kernel runs with (-1: no segment).
  double configure(const HbpLaunch& launch, const std::vector<DeviceOffset>& begin,
                   const std::vector<Ordinal>& group_ptr) {
    int device = 0, sms = 0, max_smem = 0;
    KSPMV_CUDA_CHECK(cudaGetDevice(&device));
    KSPMV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    KSPMV_CUDA_CHECK(
        cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    threads_ = 32 * launch.warps;
    smem_ = std::size_t(threads_) * (sizeof(double) * kStagedChunks + sizeof(DeviceOffset));
    const auto kernel = [&](bool segment) {
      if (launch.registers == 64)
        return segment ? hbp_spmv_kernel<S, true, 64> : hbp_spmv_kernel<S, false, 64>;
      return segment ? hbp_spmv_kernel<S, true, 48> : hbp_spmv_kernel<S, false, 48>;
    };
    const auto resident = [&](bool segment, std::size_t smem) {
      // The limit is the function's, shared by every HbpSpmv on this device: the device's
      // largest, never this matrix's (a smaller one would fail the launches of a wider one).
      KSPMV_CUDA_CHECK(cudaFuncSetAttribute(kernel(segment),
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
      int blocks_per_sm = 0;
      KSPMV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &blocks_per_sm, kernel(segment), threads_, smem));
      return std::max(1, blocks_per_sm);
    };
    double shared_x = launch.shared_x;
    const std::size_t segment =
        std::size_t(std::max(1, std::min(h_.params.block_cols, h_.ncols))) * sizeof(S);
    const int per_sm = resident(false, smem_);
    if (shared_x >= 0 && smem_ + segment <= std::size_t(max_smem) &&
        dense_column(begin, group_ptr, shared_x) && resident(true, smem_ + segment) >= per_sm)
      smem_ += segment;
    else
      shared_x = -1;
    kernel_ = kernel(shared_x >= 0);
    // No larger than a group per warp (each warp takes a ticket at least).
    const Ordinal groups = static_cast<Ordinal>(begin.size()) - 1;
    grid_ = std::max(1, std::min(per_sm * sms, (groups + launch.warps - 1) / launch.warps));
    return shared_x;
  }

  // Whether some block column holds at least shared_x entries per entry of its x segment (a run
  // of the fixed part, some of its blocks, holds no more).
  bool dense_column(const std::vector<DeviceOffset>& begin, const std::vector<Ordinal>& group_ptr,
                    double shared_x) const {
    const std::vector<Ordinal> block_col = to_host(h_.block_col);
    const Ordinal M = h_.params.block_cols;
    for (Ordinal b = 0, run = 0; b < h_.blocks; b = run) {
      for (run = b + 1; run < h_.blocks && block_col[run] == block_col[b];) ++run;
      const long long c0 = static_cast<long long>(block_col[b]) * M;
      const double len = static_cast<double>(std::min<long long>(M, h_.ncols - c0));
      if (begin[group_ptr[run]] - begin[group_ptr[b]] >= shared_x * len) return true;
    }
    return false;
  }

  // The groups of more than slice_nnz elements, their slices and rows' ends (HbpArgs::slices).
  void plan_slices(const std::vector<DeviceOffset>& begin, DeviceOffset slice_nnz) {
    std::vector<Ordinal> heavy;
    std::vector<int4> slices;
    for (Ordinal g = 0; g + 1 < static_cast<Ordinal>(begin.size()); ++g) {
      const DeviceOffset n = begin[g + 1] - begin[g];
      if (n <= slice_nnz) continue;
      const int count = static_cast<int>((n + slice_nnz - 1) / slice_nnz);
      for (int k = 0; k < count; ++k)
        slices.push_back(make_int4(g, k, static_cast<int>(heavy.size()), count));
      heavy.push_back(g);
    }
    slices_ = upload_vector(slices);
    const DeviceBuffer<Ordinal> groups = upload_vector(heavy);
    const std::size_t h = heavy.size();
    heavy_ends_ = DeviceBuffer<DeviceOffset>(32 * h);
    scratch_ = DeviceBuffer<double>(32 * h);
    slices_done_ = DeviceBuffer<unsigned>(h);
    if (h == 0) return;
    KSPMV_CUDA_CHECK(cudaMemset(heavy_ends_.data(), 0, heavy_ends_.bytes()));
    KSPMV_CUDA_CHECK(cudaMemset(scratch_.data(), 0, scratch_.bytes()));
    KSPMV_CUDA_CHECK(cudaMemset(slices_done_.data(), 0, slices_done_.bytes()));
    hbp_heavy_ends_kernel<<<grid_for(32ll * h), kBlock>>>(h_.add_sign.data(), h_.begin_nnz.data(),
                                                          groups.data(), static_cast<Ordinal>(h),
                                                          heavy_ends_.data());
    check_launch("hbp_heavy_ends_kernel");
    KSPMV_CUDA_CHECK(cudaDeviceSynchronize());  // before `groups` goes
  }

  // Where each slot's sum goes (dest), whether the combine part runs, and its lanes per row.
  void plan_rows() {
    const std::vector<Ordinal> combine = to_host(h_.combine_ptr);
    const analysis::RowStats s = analysis::row_stats(
        std::vector<Offset>(combine.begin(), combine.end()).data(), h_.nrows, 0);
    lanes_ = h_.nrows > 0 ? analysis::csr_vector_lanes(s.mean_row, s.cv(), s.nrows) : 1;
    for (Ordinal i = 0; i < h_.nrows && !combined_; ++i)
      combined_ = combine[i + 1] - combine[i] != 1;
    const Ordinal slots = static_cast<Ordinal>(h_.output_hash.size());
    dest_ = DeviceBuffer<Ordinal>(slots);
    if (slots == 0) return;
    hbp_dest_kernel<<<grid_for(slots), kBlock>>>(h_.output_hash.data(), h_.combine_ptr.data(),
                                                 h_.nrows, slots, dest_.data());
    check_launch("hbp_dest_kernel");
  }

  template <int V>
  void combine(S alpha, S beta, S* y, cudaStream_t stream) {
    hbp_combine_kernel<V, S><<<grid_for(static_cast<long long>(h_.nrows) * V), kBlock, 0, stream>>>(
        h_.combine_ptr.data(), partial_.data(), h_.nrows, alpha, beta, y);
    check_launch("hbp_combine_kernel");
  }

  DeviceHbp<S> h_;
  std::vector<DeviceOffset> sources_host_;  // until the first refresh
  DeviceBuffer<DeviceOffset> sources_;      // from the first refresh on
  DeviceBuffer<int4> info_, slices_;
  DeviceBuffer<Ordinal> dest_;
  DeviceBuffer<DeviceOffset> heavy_ends_;
  DeviceBuffer<double> scratch_;
  DeviceBuffer<unsigned> slices_done_;
  bool combined_ = false;  // some row has no pair or several: the combine part runs
  HbpArgs<S> args_{};
  void (*kernel_)(HbpArgs<S>, const S*, S*, Ordinal*) = nullptr;  // with the x segment or not
  int threads_ = 32, grid_ = 1, lanes_ = 1;
  std::size_t smem_ = 0;
  DeviceBuffer<S> partial_;
  DeviceBuffer<Ordinal> tickets_{2};  // competitive part, thread blocks done
};

}  // namespace

void check_hbp_launch(const HbpLaunch& l) {
  if (l.warps < 1 || l.warps > 32)
    throw InvalidArgument("hbp: warps per thread block must be in [1, 32], got " +
                          std::to_string(l.warps));
  if (l.slice_nnz < 0 || l.ticket_groups < 0 || !(l.shared_x == l.shared_x))
    throw InvalidArgument("hbp: slice_nnz and ticket_groups must be >= 0, shared_x a number");
  if (l.registers != 48 && l.registers != 64)
    throw InvalidArgument("hbp: registers per thread must be 48 or 64, got " +
                          std::to_string(l.registers));
}

namespace {
// HBP's element offsets are 32-bit (its kernels' loops with them included, up to a step of a
// slice past the last element): UnsupportedError for a matrix of more than kHbpMaxElements.
void check_hbp_elements(Offset elements) {
  if (elements > kHbpMaxElements)
    throw UnsupportedError("hbp: " + std::to_string(elements) +
                           " non-zeros; HBP's element offsets are 32-bit (at most " +
                           std::to_string(kHbpMaxElements) + ")");
}
}  // namespace

template <class Scalar>
DeviceHbp<Scalar> DeviceHbp<Scalar>::upload(const HbpMatrix<Scalar>& h) {
  check_hbp_elements(h.nnz());
  DeviceHbp d;
  d.nrows = h.nrows, d.ncols = h.ncols, d.blocks = h.blocks();
  d.params = h.params, d.hash = h.hash;
  d.block_row = upload_vector(h.block_row);
  d.block_col = upload_vector(h.block_col);
  d.table_ptr = upload_vector(h.table_ptr);
  d.group_ptr = upload_vector(h.group_ptr);
  d.output_hash = upload_vector(h.output_hash);
  d.combine_ptr = upload_vector(h.combine_ptr);
  d.begin_nnz = upload_vector(std::vector<DeviceOffset>(h.begin_nnz.begin(), h.begin_nnz.end()));
  d.col = upload_vector(h.col);
  d.data = upload_vector(h.data);
  d.add_sign = upload_vector(h.add_sign);
  d.dp_padded_nnz = h.dp_padded_nnz;
  return d;
}

template <class Scalar>
HbpMatrix<Scalar> DeviceHbp<Scalar>::download() const {
  HbpMatrix<Scalar> h;
  h.nrows = nrows, h.ncols = ncols, h.params = params, h.hash = hash;
  h.block_row = to_host(block_row);
  h.block_col = to_host(block_col);
  h.table_ptr = to_host(table_ptr);
  h.group_ptr = to_host(group_ptr);
  h.output_hash = to_host(output_hash);
  h.combine_ptr = to_host(combine_ptr);
  const std::vector<DeviceOffset> begin = to_host(begin_nnz);
  h.begin_nnz.assign(begin.begin(), begin.end());
  h.col = to_host(col);
  h.data = to_host(data);
  h.add_sign = to_host(add_sign);
  h.dp_padded_nnz = dp_padded_nnz;
  return h;
}

template <class Scalar>
std::size_t DeviceHbp<Scalar>::bytes() const {
  return block_row.bytes() + block_col.bytes() + table_ptr.bytes() + group_ptr.bytes() +
         output_hash.bytes() + combine_ptr.bytes() + begin_nnz.bytes() + col.bytes() +
         data.bytes() + add_sign.bytes();
}

namespace {

// One value from the device.
template <class T>
T read_back(const T* p) {
  T v;
  KSPMV_CUDA_CHECK(cudaMemcpy(&v, p, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// build_hbp_device with the given hash, or (null) the hash sampled in Alg. 2's first pass;
// with `sources`, also each element's position in `a` (on the host).
template <class Scalar>
DeviceHbp<Scalar> build_on_device(const DeviceCsr<Scalar>& a, const HbpParams& p,
                                  const HbpHash* given, HbpReorder reorder,
                                  std::vector<DeviceOffset>* sources = nullptr) {
  check_hbp_params(p);
  check_hbp_elements(a.nnz);
  if (a.wide())  // its row pointer is 64-bit: the build's passes read a 32-bit one
    throw UnsupportedError("hbp: builds from a device CSR of 32-bit row offsets, not 64-bit");
  const Ordinal N = p.block_rows, M = p.block_cols, m = a.m;
  const Ordinal C = static_cast<Ordinal>((static_cast<long long>(a.n) + M - 1) / M);
  DeviceHbp<Scalar> h;
  h.nrows = m, h.ncols = a.n, h.params = p;

  // Alg. 2, first pass: the pairs of each row, their scan into combine_ptr.
  h.combine_ptr = DeviceBuffer<Ordinal>(std::size_t(m) + 1);
  KSPMV_CUDA_CHECK(cudaMemset(h.combine_ptr.data(), 0, h.combine_ptr.bytes()));
  DeviceBuffer<unsigned long long> shifts(given ? 0 : kHbpMaxShift + 1);
  if (!given) KSPMV_CUDA_CHECK(cudaMemset(shifts.data(), 0, shifts.bytes()));
  if (m > 0) {
    hbp_count_pairs_kernel<<<grid_for(m), kBlock>>>(a.row_ptr.data(), a.col.data(), m, M,
                                                    hbp_sample_step(m), h.combine_ptr.data(),
                                                    shifts.data());
    check_launch("hbp_count_pairs_kernel");
  }
  exclusive_sum(h.combine_ptr.data(), std::size_t(m) + 1);
  const Ordinal S = read_back(h.combine_ptr.data() + m);  // <= nnz < 2^31
  if (given) {
    h.hash = *given;
  } else {
    const std::vector<unsigned long long> sampled = to_host(shifts);
    const std::vector<Offset> histogram(sampled.begin(), sampled.end());
    h.hash = hbp_hash_from_shifts(histogram.data(), p);
  }

  // Second pass: each pair's first entry and block column; the pairs stably sorted by block
  // column give the schedule order (slot s holds pair[s], of block column key[s]).
  DeviceBuffer<DeviceOffset> first(std::size_t(S) + 1);
  const auto nnz = static_cast<DeviceOffset>(a.nnz);  // checked: 32 bits
  KSPMV_CUDA_CHECK(
      cudaMemcpy(first.data() + S, &nnz, sizeof(DeviceOffset), cudaMemcpyHostToDevice));
  DeviceBuffer<unsigned> key(S), key_alt(S);
  DeviceBuffer<Ordinal> pair(S), pair_alt(S);
  if (S > 0) {
    hbp_pairs_kernel<<<grid_for(m), kBlock>>>(a.row_ptr.data(), a.col.data(), m, M,
                                              h.combine_ptr.data(), first.data(), key.data(),
                                              pair.data());
    check_launch("hbp_pairs_kernel");
    int bits = 1;
    while ((1ll << bits) < C) ++bits;
    cub::DoubleBuffer<unsigned> keys(key.data(), key_alt.data());
    cub::DoubleBuffer<Ordinal> pairs(pair.data(), pair_alt.data());
    std::size_t temp_bytes = 0;
    KSPMV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, pairs, S, 0, bits));
    DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
    KSPMV_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys, pairs, S, 0, bits));
    if (keys.Current() != key.data()) std::swap(key, key_alt);
    if (pairs.Current() != pair.data()) std::swap(pair, pair_alt);
  }
  key_alt = DeviceBuffer<unsigned>();
  pair_alt = DeviceBuffer<Ordinal>();

  // The non-empty blocks: flags of their first slots, scanned into block ids.
  DeviceBuffer<Ordinal> id(std::size_t(S) + 1);
  KSPMV_CUDA_CHECK(cudaMemset(id.data(), 0, id.bytes()));
  if (S > 0) {
    hbp_block_flags_kernel<<<grid_for(S), kBlock>>>(key.data(), pair.data(), h.combine_ptr.data(),
                                                    m, S, N, id.data());
    check_launch("hbp_block_flags_kernel");
  }
  exclusive_sum(id.data(), std::size_t(S) + 1);
  const Ordinal blocks = read_back(id.data() + S);
  h.blocks = blocks;
  h.block_row = DeviceBuffer<Ordinal>(blocks);
  h.block_col = DeviceBuffer<Ordinal>(blocks);
  h.table_ptr = DeviceBuffer<Ordinal>(std::size_t(blocks) + 1);
  hbp_blocks_kernel<<<grid_for(static_cast<long long>(S) + 1), kBlock>>>(
      key.data(), pair.data(), h.combine_ptr.data(), m, S, N, id.data(), h.block_row.data(),
      h.block_col.data(), h.table_ptr.data());
  check_launch("hbp_blocks_kernel");
  key = DeviceBuffer<unsigned>();
  id = DeviceBuffer<Ordinal>();

  // The blocks' warp groups.
  h.group_ptr = DeviceBuffer<Ordinal>(std::size_t(blocks) + 1);
  KSPMV_CUDA_CHECK(cudaMemset(h.group_ptr.data(), 0, h.group_ptr.bytes()));
  if (blocks > 0) {
    hbp_group_counts_kernel<<<grid_for(blocks), kBlock>>>(h.table_ptr.data(), blocks,
                                                          h.group_ptr.data());
    check_launch("hbp_group_counts_kernel");
  }
  exclusive_sum(h.group_ptr.data(), std::size_t(blocks) + 1);
  const Ordinal groups = read_back(h.group_ptr.data() + blocks);

  // Hash placement and the groups' sizes, their scan into the groups' first elements.
  h.output_hash = DeviceBuffer<Ordinal>(S);
  h.begin_nnz = DeviceBuffer<DeviceOffset>(std::size_t(groups) + 1);
  KSPMV_CUDA_CHECK(cudaMemset(h.begin_nnz.data(), 0, h.begin_nnz.bytes()));
  DeviceBuffer<unsigned long long> padded(reorder == HbpReorder::Dp ? 1 : 0);
  if (reorder == HbpReorder::Dp) KSPMV_CUDA_CHECK(cudaMemset(padded.data(), 0, padded.bytes()));
  const Event reorder_start, reorder_end;
  hbp_delay_kernel<<<1, 1>>>(20000);
  check_launch("hbp_delay_kernel");
  reorder_start.record(nullptr);
  if (blocks > 0 && reorder == HbpReorder::Hash) {
    hbp_place_kernel<<<blocks, N, 2 * N * sizeof(int)>>>(h.table_ptr.data(), pair.data(),
                                                         first.data(), h.hash, h.group_ptr.data(),
                                                         h.output_hash.data(), h.begin_nnz.data());
    check_launch("hbp_place_kernel");
  } else if (blocks > 0) {
    hbp_sort_place_kernel<<<blocks, kSortThreads>>>(
        h.table_ptr.data(), pair.data(), first.data(), N, reorder == HbpReorder::Dp,
        h.group_ptr.data(), h.output_hash.data(), h.begin_nnz.data(), padded.data());
    check_launch("hbp_sort_place_kernel");
  }
  reorder_end.record(nullptr);
  pair = DeviceBuffer<Ordinal>();
  if (reorder == HbpReorder::Dp) h.dp_padded_nnz = static_cast<Offset>(to_host(padded)[0]);
  exclusive_sum(h.begin_nnz.data(), std::size_t(groups) + 1);

  // The conversion.
  h.col = DeviceBuffer<std::uint16_t>(a.nnz);
  h.data = DeviceBuffer<Scalar>(a.nnz);
  h.add_sign = DeviceBuffer<std::int8_t>(a.nnz);
  DeviceBuffer<DeviceOffset> source(sources ? a.nnz : 0);
  if (groups > 0) {
    hbp_fill_kernel<Scalar><<<grid_for(static_cast<long long>(groups) * 32), kBlock>>>(
        a.col.data(), a.val.data(), first.data(), h.output_hash.data(), h.table_ptr.data(),
        h.block_col.data(), h.group_ptr.data(), h.begin_nnz.data(), blocks, groups, M, h.col.data(),
        h.data.data(), h.add_sign.data(), source.data());
    check_launch("hbp_fill_kernel");
  }
  KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
  if (sources) *sources = to_host(source);
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
                                             const CsrPointers<Scalar>& host, const HbpParams& p,
                                             const HbpLaunch& launch) {
  check_hbp_launch(launch);
  std::vector<DeviceOffset> sources;  // where each element comes from, for value refresh
  if (a && hbp_rows_sorted(host.row_ptr, host.col, host.m)) {
    DeviceHbp<Scalar> h = build_on_device(*a, p, nullptr, HbpReorder::Hash, &sources);
    return std::make_unique<HbpSpmv<Scalar>>(std::move(h), std::move(sources), launch);
  }
  const HbpHash hash = hbp_sample_hash(host.row_ptr, host.col, host.m, host.n, p);
  std::vector<Offset> wide;
  DeviceHbp<Scalar> h =
      DeviceHbp<Scalar>::upload(build_hbp(host, p, hash, HbpReorder::Hash, &wide));
  sources.assign(wide.begin(), wide.end());  // < 2^31 entries: upload checked nnz
  return std::make_unique<HbpSpmv<Scalar>>(std::move(h), std::move(sources), launch);
}

template <class Scalar>
bool hbp_worth_timing(const CsrPointers<Scalar>& host, const HbpParams& p) {
  if (host.nnz() > kHbpMaxElements) return false;  // HBP does not take it
  const double slots =
      static_cast<double>(hbp_table_slots(host.row_ptr, host.col, host.m, host.n, p));
  const double csr = static_cast<double>(host.nnz()) * (sizeof(Scalar) + sizeof(Ordinal)) +
                     (static_cast<double>(host.m) + 1) * sizeof(DeviceOffset);
  return slots * (sizeof(Ordinal) + 2 * sizeof(Scalar)) <= csr;
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
                                                     const CsrPointers<float>&, const HbpParams&,
                                                     const HbpLaunch&);
template std::unique_ptr<DeviceSpmv<double>> make_hbp(std::shared_ptr<const DeviceCsr<double>>,
                                                      const CsrPointers<double>&, const HbpParams&,
                                                      const HbpLaunch&);
template bool hbp_worth_timing(const CsrPointers<float>&, const HbpParams&);
template bool hbp_worth_timing(const CsrPointers<double>&, const HbpParams&);

}  // namespace kspmv::cuda

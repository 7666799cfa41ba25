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

// What the SpMV kernel reads: the format, and its plan (group_info, team).
template <class S>
struct HbpArgs {
  const Ordinal* block_col;
  const Ordinal* group_ptr;
  const DeviceOffset* begin_nnz;
  const std::uint16_t* col;
  const S* data;
  const std::int8_t* add_sign;
  const Ordinal* output_hash;
  const int4* group_info;  // by warp group: its first table slot, rows, block column
  const Ordinal* team;     // the groups run by a whole thread block
  Ordinal groups, teams, n, M;
  Ordinal per_block, competitive;  // blocks per thread block (fixed part); first competitive group
  DeviceOffset team_nnz;           // groups of at least this many elements are teams' (0: none)
  Ordinal ticket_groups;
  double shared_x;  // x segment in shared memory for runs of >= shared_x entries per x entry
};

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

// Sums a warp group read as strips (Alg. 3, see run_group): term(e) is element e's product. The
// ends of the group's rows are in ends[0, rows); `member` of `team` warps takes its share of
// each strip. Returns this lane's row sum (lane < rows).
template <class Term>
__device__ __forceinline__ double sum_strips(int rows, DeviceOffset e0, const DeviceOffset* ends,
                                             int member, int team, Term term) {
  const int lane = threadIdx.x & 31;
  unsigned active = rows == 32 ? kFull : (1u << rows) - 1u;
  int width = rows;
  DeviceOffset pos = e0;
  double sum = 0;  // this lane's row; a row may hold block_cols terms: float sums lose digits
  for (int i = 0; i < rows;) {
    const DeviceOffset last = pos + (ends[i] - pos) / width * width;  // the step of the next end
    const DeviceOffset stop = last + width;
    const int stride = 32 / width * width;  // lane t takes every stride-th element from pos + t
    double acc = 0;
    if (lane < stride) {
#pragma unroll 4
      for (DeviceOffset e = pos + lane + member * stride; e < stop; e += stride * team)
        acc += term(e);
    }
    for (int o = width; o < stride; o *= 2) {  // lane r < width: the terms of the r-th lane
      const double v = __shfl_down_sync(kFull, acc, o);
      if (lane + o < stride) acc += v;
    }
    const bool on = active >> lane & 1u;
    const int rank = __popc(active & lanes_below(lane));
    const double mine = __shfl_sync(kFull, acc, rank & 31);
    if (on) sum += mine;
    bool ends_here = false;  // this lane's element of step `last` is its row's last
    for (; i < rows && ends[i] < stop; ++i) ends_here |= ends[i] == last + rank;
    active &= ~__ballot_sync(kFull, on && ends_here);
    width = __popc(active);
    pos = stop;
  }
  return sum;
}

// Alg. 3 on warp group `r`, by a team of `team` warps (1, or the thread block) of which this
// warp is `member`. The group is column-major (Sec. III-B): at each step every active lane (row)
// has one element, in lane order, and a row leaves after its last element (add_sign -1).
// Instead of following add_sign from element to element (one dependent load per step), the team
// first finds the rows' ends (one per row, in order, into `ends`); between two steps holding ends
// the active lanes stay the same, so the steps form a dense strip of `width` columns whose
// element pos + s * width + r belongs to the r-th active lane. Each strip is summed with
// independent, coalesced loads (lanes cover 32 / width steps at once, then a strided shuffle tree
// gathers each row's terms) and handed to its rows' lanes. A warp alone stages a group of at most
// kStagedChunks chunks: every load at once, x next, the products into `buf` (this warp's, shared
// memory), so that the group costs two memory round trips. xs: the block's x segment (shared
// memory, kSharedX) or x; `found`, `red`: the team's end count and partial sums (shared memory).
template <bool kSharedX, class S>
__device__ void run_group(const HbpArgs<S>& a, const GroupRef& r, const S* x, const S* xs,
                          int member, int team, DeviceOffset* ends, int* found, double* red,
                          double* buf, S* __restrict__ partial) {
  const int lane = threadIdx.x & 31;
  const int rows = r.info.y;
  const DeviceOffset e0 = r.e0, e1 = r.e1;
  if (!kSharedX) xs = x + static_cast<long long>(r.info.z) * a.M;
  const auto product = [&](DeviceOffset e) {
    return static_cast<double>(__ldg(a.data + e)) * x_at<kSharedX>(xs, __ldg(a.col + e));
  };
  if (team > 1) {  // members scan interleaved chunks for the ends, then warp 0 ranks them
    for (DeviceOffset e = e0 + member * 32 + lane; e < e1; e += 32 * team)
      if (a.add_sign[e] < 0) ends[atomicAdd(found, 1)] = e;
    __syncthreads();
    if (member == 0) {
      const DeviceOffset v = lane < rows ? ends[lane] : 0;
      int rank = 0;
      for (int j = 0; j < rows; ++j) rank += __shfl_sync(kFull, v, j) < v;
      __syncwarp();
      if (lane < rows) ends[rank] = v;
      if (lane == 0) *found = 0;
    }
    __syncthreads();
    red[member * 32 + lane] = sum_strips(rows, e0, ends, member, team, product);
    __syncthreads();
    if (member == 0 && lane < rows) {
      double total = 0;
      for (int w = 0; w < team; ++w) total += red[w * 32 + lane];
      partial[a.output_hash[r.info.x + lane]] = static_cast<S>(total);
    }
    __syncthreads();  // ends and red are rewritten by the next team group
    return;
  }
  const Ordinal out = lane < rows ? a.output_hash[r.info.x + lane] : 0;
  double sum;
  if (e1 - e0 <= 32 * kStagedChunks) {
    S v[kStagedChunks];
    int c[kStagedChunks];
    bool end[kStagedChunks];
#pragma unroll
    for (int k = 0; k < kStagedChunks; ++k) {  // every load at once
      const DeviceOffset e = e0 + 32 * k + lane;
      const bool in = e < e1;
      v[k] = in ? __ldg(a.data + e) : S(0);
      c[k] = in ? __ldg(a.col + e) : 0;
      end[k] = in && __ldg(a.add_sign + e) < 0;
    }
    int count = 0;
#pragma unroll
    for (int k = 0; k < kStagedChunks; ++k) {
      if (e0 + 32 * k < e1)
        buf[32 * k + lane] = static_cast<double>(v[k]) * x_at<kSharedX>(xs, c[k]);
      const unsigned m = __ballot_sync(kFull, end[k]);
      if (end[k]) ends[count + __popc(m & lanes_below(lane))] = e0 + 32 * k + lane;
      count += __popc(m);
    }
    __syncwarp();
    sum = sum_strips(rows, e0, ends, 0, 1, [&](DeviceOffset e) { return buf[e - e0]; });
  } else {  // the ends in element order, by ballot
    int count = 0;
#pragma unroll 4
    for (DeviceOffset base = e0; base < e1; base += 32) {
      const DeviceOffset e = base + lane;
      const bool end = e < e1 && a.add_sign[e] < 0;
      const unsigned m = __ballot_sync(kFull, end);
      if (end) ends[count + __popc(m & lanes_below(lane))] = e;
      count += __popc(m);
    }
    __syncwarp();
    sum = sum_strips(rows, e0, ends, 0, 1, product);
  }
  if (lane < rows) partial[out] = static_cast<S>(sum);
  __syncwarp();  // ends and buf are rewritten by the next group
}

// The SpMV part (Sec. III-C), thread blocks of W warps. First the teams: thread blocks take the
// groups of >= team_nnz elements by ticket (tickets[0]) and run each with all their warps. Then
// the fixed part: thread block c runs blocks [c * per_block, (c + 1) * per_block) (schedule
// order: block-column runs), its warps taking the run's groups in turn, with the run's x
// segment in shared memory where the run holds >= shared_x entries per x entry. Then the
// competitive part: warps take ticket_groups groups at a time by ticket (tickets[1]). A warp
// loads its next group's descriptor (and its next ticket) before running the current one. 48
// registers: 40 warps per SM for W = 8 (62 unbounded: 32), at the cost of a few spilled bytes.
// Shared memory: red and ends (32 per warp), the staging buffers (32 * kStagedChunks per
// warp), the team's end count, then the x segment.
template <class S>
__global__ void __maxnreg__(48)
    hbp_spmv_kernel(HbpArgs<S> a, const S* __restrict__ x, S* __restrict__ partial,
                    Ordinal* __restrict__ tickets) {
  extern __shared__ __align__(16) unsigned char hbp_smem[];
  const int W = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  double* red = reinterpret_cast<double*>(hbp_smem);
  double* buf = red + W * 32 + warp * 32 * kStagedChunks;
  DeviceOffset* ends = reinterpret_cast<DeviceOffset*>(red + W * 32 * (1 + kStagedChunks));
  int* shared_int = reinterpret_cast<int*>(ends + W * 32);  // [0]: ticket, [1]: team's ends
  S* xs = reinterpret_cast<S*>(shared_int + 4);             // 16-byte aligned
  if (threadIdx.x == 0) shared_int[1] = 0;
  for (;;) {
    __syncthreads();
    if (threadIdx.x == 0) shared_int[0] = atomicAdd(&tickets[0], 1);
    __syncthreads();
    const Ordinal t = shared_int[0];
    if (t >= a.teams) break;
    run_group<false>(a, load_group(a, a.team[t]), x, xs, warp, W, ends, shared_int + 1, red, buf,
                     partial);
  }
  ends += warp * 32;
  const auto mine = [&](const GroupRef& r) { return r.e1 - r.e0 < a.team_nnz; };
  for (Ordinal b = blockIdx.x * a.per_block, b_end = b + a.per_block; b < b_end;) {
    Ordinal r = b_end;  // the run of block b's column
    bool shared = false;
    if (a.shared_x >= 0) {
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
      if (shared)
        run_group<true>(a, cur, x, xs, 0, 1, ends, nullptr, nullptr, buf, partial);
      else
        run_group<false>(a, cur, x, xs, 0, 1, ends, nullptr, nullptr, buf, partial);
    }
    b = r;
  }
  Ordinal t = 0;
  if (lane == 0) t = atomicAdd(&tickets[1], a.ticket_groups);
  for (Ordinal g0 = a.competitive + __shfl_sync(kFull, t, 0); g0 < a.groups;) {
    if (lane == 0) t = atomicAdd(&tickets[1], a.ticket_groups);  // the next ticket, ahead
    const Ordinal g1 = min(a.groups, g0 + a.ticket_groups);
    GroupRef next = load_group(a, g0);
    for (Ordinal g = g0; g < g1; ++g) {
      const GroupRef cur = next;
      if (g + 1 < g1) next = load_group(a, g + 1);
      if (mine(cur)) run_group<false>(a, cur, x, xs, 0, 1, ends, nullptr, nullptr, buf, partial);
    }
    g0 = a.competitive + __shfl_sync(kFull, t, 0);
  }
}

// The combine part: V lanes per row sum its partial results (contiguous, by block column); the
// first thread resets the tickets for the next run (this run's SpMV part is done).
template <int V, class S>
__global__ void __launch_bounds__(kBlock)
    hbp_combine_kernel(const Ordinal* __restrict__ combine_ptr, const S* __restrict__ partial,
                       Ordinal m, S alpha, S beta, S* __restrict__ y,
                       Ordinal* __restrict__ tickets) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t == 0) tickets[0] = tickets[1] = 0;
  const long long i = t / V;
  double sum = 0;
  if (i < m)
    for (Ordinal q = combine_ptr[i] + static_cast<Ordinal>(t % V); q < combine_ptr[i + 1]; q += V)
      sum += partial[q];
  sum = warp_sum<V>(sum);
  if (i < m && t % V == 0) {
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
    int device = 0, sms = 0, per_sm = 0, max_smem = 0;
    KSPMV_CUDA_CHECK(cudaGetDevice(&device));
    KSPMV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    KSPMV_CUDA_CHECK(
        cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const Ordinal blocks = h_.blocks, groups = static_cast<Ordinal>(h_.begin_nnz.size()) - 1;
    threads_ = 32 * launch.warps;
    // Sec. III-A sizes the x segment for the shared memory; where it does not fit, x is read
    // through the caches.
    const std::size_t segment =
        std::size_t(std::max(1, std::min(h_.params.block_cols, h_.ncols))) * sizeof(S);
    smem_ = std::size_t(threads_) * (sizeof(double) * (1 + kStagedChunks) + sizeof(DeviceOffset)) +
            4 * sizeof(int);
    double shared_x = launch.shared_x;
    if (shared_x >= 0 && smem_ + segment <= std::size_t(max_smem))
      smem_ += segment;
    else
      shared_x = -1;
    // The limit is the function's, shared by every HbpSpmv on this device: the device's largest,
    // never this matrix's (a smaller one would fail the launches of a wider matrix).
    KSPMV_CUDA_CHECK(cudaFuncSetAttribute(hbp_spmv_kernel<S>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
    KSPMV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hbp_spmv_kernel<S>,
                                                                   threads_, smem_));
    grid_ = std::max(1, per_sm) * sms;
    const HbpSplit split = hbp_split(blocks, grid_, h_.params.fixed_fraction);
    partial_ = DeviceBuffer<S>(h_.output_hash.size());
    KSPMV_CUDA_CHECK(cudaMemset(tickets_.data(), 0, tickets_.bytes()));

    // The plan: each group's table slots and block column; the teams' groups; the combine's lanes.
    info_ = DeviceBuffer<int4>(groups);
    if (blocks > 0) {
      hbp_group_info_kernel<<<grid_for(blocks), kBlock>>>(
          h_.table_ptr.data(), h_.group_ptr.data(), h_.block_col.data(), blocks, info_.data());
      check_launch("hbp_group_info_kernel");
    }
    const std::vector<DeviceOffset> begin = to_host(h_.begin_nnz);
    std::vector<Ordinal> team;
    for (Ordinal g = 0; g < groups && launch.team_nnz > 0; ++g)
      if (begin[g + 1] - begin[g] >= launch.team_nnz) team.push_back(g);
    team_ = upload_vector(team);
    const std::vector<Ordinal> combine = to_host(h_.combine_ptr);
    lanes_ = combine_lanes(combine.data(), h_.nrows);
    const double mean_group = groups > 0 ? double(begin[groups]) / groups : 1;
    const Ordinal per_ticket =
        launch.ticket_groups > 0
            ? launch.ticket_groups
            : static_cast<Ordinal>(std::clamp(std::lround(512 / mean_group), 1l, 32l));
    const std::vector<Ordinal> group_ptr = to_host(h_.group_ptr);
    args_ = HbpArgs<S>{h_.block_col.data(),
                       h_.group_ptr.data(),
                       h_.begin_nnz.data(),
                       h_.col.data(),
                       h_.data.data(),
                       h_.add_sign.data(),
                       h_.output_hash.data(),
                       info_.data(),
                       team_.data(),
                       groups,
                       static_cast<Ordinal>(team.size()),
                       h_.ncols,
                       h_.params.block_cols,
                       split.per_warp,
                       group_ptr[split.fixed],
                       static_cast<DeviceOffset>(
                           std::min<Offset>(launch.team_nnz > 0 ? launch.team_nnz : Offset(1) << 31,
                                            std::numeric_limits<DeviceOffset>::max())),
                       per_ticket,
                       shared_x};
  }

  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    const Ordinal m = h_.nrows;
    if (m == 0) return;
    if (alpha == S(0) || h_.blocks == 0) return scale_vector(y, m, beta, stream);
    hbp_spmv_kernel<S>
        <<<grid_, threads_, smem_, stream>>>(args_, x, partial_.data(), tickets_.data());
    check_launch("hbp_spmv_kernel");
    switch (lanes_) {
      case 1:
        return combine<1>(alpha, beta, y, stream);
      case 2:
        return combine<2>(alpha, beta, y, stream);
      case 4:
        return combine<4>(alpha, beta, y, stream);
      case 8:
        return combine<8>(alpha, beta, y, stream);
      case 16:
        return combine<16>(alpha, beta, y, stream);
      default:
        return combine<32>(alpha, beta, y, stream);
    }
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
           team_.bytes();
  }

 private:
  // The combine part's lanes per row: CSR-Vector's choice for rows of the pairs' counts.
  static int combine_lanes(const Ordinal* combine_ptr, Ordinal m) {
    std::vector<Offset> ptr(combine_ptr, combine_ptr + std::size_t(m) + 1);
    const analysis::RowStats s = analysis::row_stats(ptr.data(), m, 0);
    return m > 0 ? analysis::csr_vector_lanes(s.mean_row, s.cv(), s.nrows) : 1;
  }

  template <int V>
  void combine(S alpha, S beta, S* y, cudaStream_t stream) {
    hbp_combine_kernel<V, S><<<grid_for(static_cast<long long>(h_.nrows) * V), kBlock, 0, stream>>>(
        h_.combine_ptr.data(), partial_.data(), h_.nrows, alpha, beta, y, tickets_.data());
    check_launch("hbp_combine_kernel");
  }

  DeviceHbp<S> h_;
  std::vector<DeviceOffset> sources_host_;  // until the first refresh
  DeviceBuffer<DeviceOffset> sources_;      // from the first refresh on
  DeviceBuffer<int4> info_;
  DeviceBuffer<Ordinal> team_;
  HbpArgs<S> args_{};
  int threads_ = 32, grid_ = 1, lanes_ = 1;
  std::size_t smem_ = 0;
  DeviceBuffer<S> partial_;
  DeviceBuffer<Ordinal> tickets_{2};
};

}  // namespace

void check_hbp_launch(const HbpLaunch& l) {
  if (l.warps < 1 || l.warps > 32)
    throw InvalidArgument("hbp: warps per thread block must be in [1, 32], got " +
                          std::to_string(l.warps));
  if (l.team_nnz < 0 || l.ticket_groups < 0 || !(l.shared_x == l.shared_x))
    throw InvalidArgument("hbp: team_nnz and ticket_groups must be >= 0, shared_x a number");
}

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
  KSPMV_CUDA_CHECK(
      cudaMemcpy(first.data() + S, &a.nnz, sizeof(DeviceOffset), cudaMemcpyHostToDevice));
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

// HBP (paper 3) on the GPU: the preprocessing (Alg. 2, the hash placement and the format
// conversion, all on the device) and the SpMV (warp groups run by warps of thread blocks that
// share a block column's x segment, fixed and competitive parts, then the combine kernel).
#pragma once

#include <cstdint>
#include <memory>

#include "backends/cuda/device_spmv.hpp"
#include "kspmv/formats/hbp.hpp"

namespace kspmv::cuda {

// The most non-zeros HBP takes on the GPU: its element offsets are 32-bit, and its loops step
// past the last element by up to a slice (HbpLaunch::slice_nnz, 2048 by default) before they
// stop, which must not wrap. A matrix of more (2^31 non-zeros or more among them) is refused
// with UnsupportedError; the other CUDA kernels take it.
inline constexpr Offset kHbpMaxElements = INT32_MAX - (Offset(1) << 20);

// The arrays of HbpMatrix on the current device, begin_nnz narrowed to 32 bits.
template <class Scalar>
struct DeviceHbp {
  Ordinal nrows = 0, ncols = 0, blocks = 0;
  HbpParams params;
  HbpHash hash;
  DeviceBuffer<Ordinal> block_row, block_col, table_ptr, group_ptr, output_hash, combine_ptr;
  DeviceBuffer<DeviceOffset> begin_nnz;
  DeviceBuffer<std::uint16_t> col;
  DeviceBuffer<Scalar> data;
  DeviceBuffer<std::int8_t> add_sign;
  Offset dp_padded_nnz = 0;  // HbpReorder::Dp only, as in HbpMatrix
  float reorder_ms = 0;      // build_hbp_device: device time of the reordering step's kernel alone

  // Throws UnsupportedError when nnz >= 2^31.
  static DeviceHbp upload(const HbpMatrix<Scalar>& h);
  HbpMatrix<Scalar> download() const;
  std::size_t bytes() const;
};

// GPU preprocessing of `a` (rows with non-decreasing columns, see hbp_rows_sorted): the same
// arrays as build_hbp(host copy, p, hash, reorder); Sort and Dp are the paper's sort2D and DP2D
// baselines on the GPU (CUB block radix sort; DP2D's dynamic programming a warp per block).
// Without `hash`, the hash is sampled on the device during Alg. 2's first pass, equal to
// hbp_sample_hash of the same matrix. Synchronous; its work buffers are sized by the non-zeros
// and the table, never by the grid of blocks.
template <class Scalar>
DeviceHbp<Scalar> build_hbp_device(const DeviceCsr<Scalar>& a, const HbpParams& p,
                                   const HbpHash& hash, HbpReorder reorder = HbpReorder::Hash);
template <class Scalar>
DeviceHbp<Scalar> build_hbp_device(const DeviceCsr<Scalar>& a, const HbpParams& p,
                                   HbpReorder reorder = HbpReorder::Hash);

// How the SpMV kernel runs the format (a plan of the kernel, not part of the format): thread
// blocks of `warps` warps. Each thread block runs the blocks of its fixed part (Sec. III-C) as
// runs of one block column, its warps taking the run's warp groups in turn; the run's x segment
// goes to shared memory (Sec. III-A) where the run holds at least `shared_x` entries per entry of
// the segment and the segment fits without costing resident thread blocks, otherwise (and for
// shared_x < 0) x is read through L1 and L2. Warp groups of more than `slice_nnz` elements (0:
// none) are cut into slices of slice_nnz, each run first by one warp; the competitive part is
// taken by warps, `ticket_groups` warp groups per ticket (0: about 512 elements per ticket, from
// the mean group). The kernel is compiled for `registers` per thread, 48 (more warps per SM, a
// few bytes spilled) or 64.
struct HbpLaunch {
  int warps = 8;
  double shared_x = 1;
  Offset slice_nnz = 2048;
  int ticket_groups = 0;
  int registers = 48;
};
// Throws InvalidArgument for warps outside [1, 32], a negative slice_nnz or ticket_groups,
// registers other than 48 and 64.
void check_hbp_launch(const HbpLaunch& launch);

// The format parameters of the CUDA kernel unless told otherwise: the paper's 512 block rows and
// fixed share, and blocks as wide as the format's 16-bit local columns allow. Sec. III-A sizes
// them (4096) for an x segment in shared memory; read through L1 and L2 instead (an H100 holds
// 50 MB of L2), x allows wider blocks, which cut the (row, block) pairs (the table, the partial
// results, the combine part) and the warp groups (fewer, fuller).
inline HbpParams hbp_device_params() {
  HbpParams p;
  p.block_cols = 65536;
  return p;
}

// The HBP kernel of `host`: preprocessed on the GPU from `a` (the same matrix uploaded) when its
// rows are sorted and `a` is given (the hash sampled there too), else on the host and uploaded. A
// row of a block (up to block_cols terms) is summed in double, float included. run() uses work
// buffers of the object: one run at a time per object. For update_values it keeps each element's
// CSR position (nnz 32-bit offsets) in host memory, moved to the device by the first refresh.
// UnsupportedError for a matrix of more than kHbpMaxElements non-zeros, or an `a` of 64-bit
// offsets.
template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_hbp(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                             const CsrPointers<Scalar>& host,
                                             const HbpParams& p = hbp_device_params(),
                                             const HbpLaunch& launch = {});

// Whether HBP is worth timing as a candidate of Kernel::Auto (never past kHbpMaxElements): its
// table traffic per SpMV (a
// destination per slot, the partial results written and read) is at most the CSR's bytes.
template <class Scalar>
bool hbp_worth_timing(const CsrPointers<Scalar>& host, const HbpParams& p = hbp_device_params());

}  // namespace kspmv::cuda

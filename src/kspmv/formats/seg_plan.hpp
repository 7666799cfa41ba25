// Host preprocessing of segSpMV (paper 5, Sec. III): rows cut into fixed-length segments padded
// with zeros, plus the tile plan the CUDA kernel uses to add segment sums per row on the GPU.
// Kokkos-free: the Kokkos format (segmented_csr.hpp) and the CUDA backend share this code.
#pragma once

#include <vector>

#include "kspmv/core/csr_pointers.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

// The longest segment: a segment must fit one tile of the CUDA kernel (seg_spmv.cu).
constexpr int kMaxSegLength = 1024;

// Paper 5, Sec. III / Table II: the smallest power of two >= the mean row length
// (3.11 -> 4, 5.61 -> 8, 11.24 -> 16, 27.19 -> 32, 50.69 -> 64). An exact power of two is kept
// (mean 4 -> 4: rows of exactly the mean length need no padding); a mean <= 1 (or NaN) gives 1;
// the result is capped at kMaxSegLength. Table II's 32.58, 36.56 and 39.00 -> 32 depart from the
// paper's own rule and are not reproduced.
int seg_length_for(double mean_row_length);

// The default segment length of kspmv (a refinement of the paper's rule, which looks at the mean
// alone and pads 27-entry stencil rows to 32): among the powers of two L in
// [seg_length_for(mean) / 8, seg_length_for(mean)], the one with the least traffic
// padded_nnz(L) * entry_bytes + segments(L) * entry_bytes / 4 (a segment's sum in shared memory
// costs about a quarter of an entry's load); ties go to the longer L. entry_bytes: bytes of one
// value and its column index (12 in double, 8 in float).
int seg_length_min_traffic(const Offset* row_ptr, Ordinal m, int entry_bytes);

// Sizes of the segmented layout of a CSR row_ptr (m + 1 entries) for a seg_length.
struct SegSizes {
  Offset segments = 0;    // sum over rows of ceil(len / seg_length); empty rows have none
  Offset padded_nnz = 0;  // segments * seg_length: entries of the padded value/column arrays
  Offset nnz = 0;         // row_ptr[m]; padded_nnz - nnz is the padding (< seg_length per row)
};
// Throws InvalidArgument unless seg_length is a power of two in [1, kMaxSegLength].
SegSizes seg_sizes(const Offset* row_ptr, Ordinal m, int seg_length);

// row_seg_ptr[i] = the first segment of row i, row_seg_ptr[m] = segments (m + 1 entries,
// caller-provided). Row i owns segments [row_seg_ptr[i], row_seg_ptr[i+1]); this is also the
// segment -> row map (the row of segment s is the last i with row_seg_ptr[i] <= s).
void seg_row_pointers(const Offset* row_ptr, Ordinal m, int seg_length, Offset* row_seg_ptr);

// Writes the padded columns and values of rows [row_begin, row_end): segment s occupies entries
// [s * seg_length, (s + 1) * seg_length), and padded_col/padded_val start at the range's first
// entry, row_seg_ptr[row_begin] * seg_length (whole arrays for rows [0, m), staging buffers for
// a chunk). Padding has value 0 and the row's last column, so that reading x there is in bounds
// and hits a line already read. Disjoint row ranges may be filled in parallel. A null padded_col
// writes the values alone (a refresh of the values on the same pattern; a.col is not read).
template <class Scalar>
void seg_fill(const CsrPointers<Scalar>& a, int seg_length, const Offset* row_seg_ptr,
              Ordinal row_begin, Ordinal row_end, Ordinal* padded_col, Scalar* padded_val);

// How the CUDA kernel adds segment sums per row: tile b holds segments
// [b * segs_per_tile, min((b + 1) * segs_per_tile, segments)). Row i is owned by the tile that
// holds segment row_seg_ptr[i] (the last tile for trailing empty rows); the owner writes y[i]
// when all of the row's segments lie in it. Rows whose segments cross a tile boundary are spans:
// their first tile leaves the sum of its part (a "tail"), every later tile the sum of its part
// (a "head"), and a second pass adds tail[first] + head[first+1 .. last].
struct SegTilePlan {
  Offset segs_per_tile = 1;
  Ordinal tiles = 0;               // >= 1 when m > 0, so that empty rows get written
  std::vector<Ordinal> own_begin;  // tiles + 1: tile b owns rows [own_begin[b], own_begin[b+1])
  std::vector<Ordinal> span_row;   // rows whose segments lie in more than one tile
  std::vector<Ordinal> span_first_tile;  // the tile of the span's first segment
  std::vector<Ordinal> span_last_tile;   // the tile of the span's last segment
};
// Throws UnsupportedError when the tile count does not fit an Ordinal.
SegTilePlan seg_tile_plan(const Offset* row_seg_ptr, Ordinal m, Offset segs_per_tile);

extern template void seg_fill(const CsrPointers<float>&, int, const Offset*, Ordinal, Ordinal,
                              Ordinal*, float*);
extern template void seg_fill(const CsrPointers<double>&, int, const Offset*, Ordinal, Ordinal,
                              Ordinal*, double*);

}  // namespace kspmv

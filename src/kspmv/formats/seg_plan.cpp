// segSpMV preprocessing (paper 5, Sec. III): segment length, padded layout, GPU tile plan.
#include "kspmv/formats/seg_plan.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "kspmv/core/error.hpp"

namespace kspmv {

namespace {
Offset segments_of(Offset length, int seg_length) {
  return (length + seg_length - 1) / seg_length;
}
}  // namespace

int seg_length_for(double mean_row_length) {
  int length = 1;
  while (length < kMaxSegLength && length < mean_row_length) length *= 2;
  return length;
}

int seg_length_min_traffic(const Offset* row_ptr, Ordinal m, int entry_bytes) {
  const int longest = seg_length_for(m > 0 ? double(row_ptr[m] - row_ptr[0]) / m : 0.0);
  const int shortest = std::max(1, longest / 8);
  std::vector<Offset> segments;  // per candidate, shortest first
  for (int len = shortest; len <= longest; len *= 2) segments.push_back(0);
  for (Ordinal i = 0; i < m; ++i) {
    const Offset length = row_ptr[i + 1] - row_ptr[i];
    for (std::size_t c = 0; c < segments.size(); ++c)
      segments[c] += segments_of(length, shortest << c);
  }
  int best = longest;
  double best_bytes = std::numeric_limits<double>::infinity();
  for (std::size_t c = segments.size(); c-- > 0;) {  // longest first: ties keep the longer
    const int len = shortest << c;
    const double bytes =
        double(segments[c]) * len * entry_bytes + double(segments[c]) * entry_bytes / 4.0;
    if (bytes < best_bytes) best = len, best_bytes = bytes;
  }
  return best;
}

SegSizes seg_sizes(const Offset* row_ptr, Ordinal m, int seg_length) {
  if (seg_length < 1 || seg_length > kMaxSegLength || (seg_length & (seg_length - 1)) != 0) {
    throw InvalidArgument("segment length must be a power of two in [1, " +
                          std::to_string(kMaxSegLength) + "] (got " + std::to_string(seg_length) +
                          ")");
  }
  SegSizes s;
  for (Ordinal i = 0; i < m; ++i)
    s.segments += segments_of(row_ptr[i + 1] - row_ptr[i], seg_length);
  s.padded_nnz = s.segments * seg_length;
  s.nnz = m > 0 ? row_ptr[m] : 0;
  return s;
}

void seg_row_pointers(const Offset* row_ptr, Ordinal m, int seg_length, Offset* row_seg_ptr) {
  row_seg_ptr[0] = 0;
  for (Ordinal i = 0; i < m; ++i) {
    row_seg_ptr[i + 1] = row_seg_ptr[i] + segments_of(row_ptr[i + 1] - row_ptr[i], seg_length);
  }
}

template <class Scalar>
void seg_fill(const CsrPointers<Scalar>& a, int seg_length, const Offset* row_seg_ptr,
              Ordinal row_begin, Ordinal row_end, Ordinal* padded_col, Scalar* padded_val) {
  const Offset first = row_seg_ptr[row_begin] * seg_length;
  for (Ordinal i = row_begin; i < row_end; ++i) {
    const Offset begin = a.row_ptr[i], end = a.row_ptr[i + 1];
    Offset out = row_seg_ptr[i] * seg_length - first;
    const Offset out_end = row_seg_ptr[i + 1] * seg_length - first;
    for (Offset k = begin; k < end; ++k, ++out) {
      if (padded_col) padded_col[out] = a.col[k];
      padded_val[out] = a.val[k];
    }
    for (; out < out_end; ++out) {  // out_end > end only for a non-empty row: a.col[end-1] exists
      if (padded_col) padded_col[out] = a.col[end - 1];
      padded_val[out] = Scalar(0);
    }
  }
}

SegTilePlan seg_tile_plan(const Offset* row_seg_ptr, Ordinal m, Offset segs_per_tile) {
  if (segs_per_tile < 1) throw InvalidArgument("segments per tile must be at least 1");
  SegTilePlan p;
  p.segs_per_tile = segs_per_tile;
  if (m == 0) {
    p.own_begin = {0};
    return p;
  }
  const Offset segments = row_seg_ptr[m];
  const Offset tiles = std::max<Offset>(1, (segments + segs_per_tile - 1) / segs_per_tile);
  if (tiles > std::numeric_limits<Ordinal>::max()) {
    throw UnsupportedError("segmented layout needs " + std::to_string(tiles) +
                           " tiles; at most 2^31 - 1 are supported");
  }
  p.tiles = static_cast<Ordinal>(tiles);
  p.own_begin.resize(std::size_t(tiles) + 1);
  p.own_begin[0] = 0;
  for (Offset b = 1; b < tiles; ++b) {
    p.own_begin[b] = static_cast<Ordinal>(
        std::lower_bound(row_seg_ptr, row_seg_ptr + m + 1, b * segs_per_tile) - row_seg_ptr);
  }
  p.own_begin[tiles] = m;
  for (Ordinal i = 0; i < m; ++i) {
    if (row_seg_ptr[i + 1] == row_seg_ptr[i]) continue;
    const Offset first = row_seg_ptr[i] / segs_per_tile;
    const Offset last = (row_seg_ptr[i + 1] - 1) / segs_per_tile;
    if (first == last) continue;
    p.span_row.push_back(i);
    p.span_first_tile.push_back(static_cast<Ordinal>(first));
    p.span_last_tile.push_back(static_cast<Ordinal>(last));
  }
  return p;
}

template void seg_fill(const CsrPointers<float>&, int, const Offset*, Ordinal, Ordinal, Ordinal*,
                       float*);
template void seg_fill(const CsrPointers<double>&, int, const Offset*, Ordinal, Ordinal, Ordinal*,
                       double*);

}  // namespace kspmv

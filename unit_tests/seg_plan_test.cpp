// segSpMV (paper 5): segment length rule, padded layout, GPU tile plan and the host twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/kokkos/segmented_csr_spmv.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/seg_plan.hpp"
#include "kspmv/formats/segmented_csr.hpp"
#include "seg_test_cases.hpp"

namespace kspmv::test {
namespace {

TEST(SegPlan, SegmentLengthsOfTableII) {
  // Table II rows that follow the paper's rule; 32.58, 36.56 and 39.00 -> 32 do not.
  const std::vector<std::pair<double, int>> table = {{3.11, 4},   {3.99, 4},   {5.61, 8},
                                                     {6.17, 8},   {11.24, 16}, {27.19, 32},
                                                     {28.23, 32}, {50.69, 64}, {60.15, 64}};
  for (const auto& [mean, length] : table) EXPECT_EQ(seg_length_for(mean), length) << mean;
}

TEST(SegPlan, SegmentLengthKeepsPowersOfTwoAndClampsToOneAndTheMaximum) {
  EXPECT_EQ(seg_length_for(4.0), 4);
  EXPECT_EQ(seg_length_for(32.0), 32);
  EXPECT_EQ(seg_length_for(1.0), 1);
  EXPECT_EQ(seg_length_for(0.4), 1);
  EXPECT_EQ(seg_length_for(0.0), 1);
  EXPECT_EQ(seg_length_for(std::numeric_limits<double>::quiet_NaN()), 1);
  EXPECT_EQ(seg_length_for(1e9), kMaxSegLength);
}

std::vector<Offset> rows_of(const std::vector<Offset>& lengths) {
  std::vector<Offset> row_ptr = {0};
  for (Offset l : lengths) row_ptr.push_back(row_ptr.back() + l);
  return row_ptr;
}

TEST(SegPlan, MinTrafficLengthAvoidsThePaddingOfTheMeanRule) {
  // 27-point stencil rows: the paper's rule pads 27 to 32 (18% more entries); 4 pads to 28.
  const auto stencil = rows_of(std::vector<Offset>(100, 27));
  EXPECT_EQ(seg_length_for(27.0), 32);
  EXPECT_EQ(seg_length_min_traffic(stencil.data(), 100, 12), 4);
  // Rows of exactly a power of two keep it; so does a matrix without rows or non-zeros.
  const auto eights = rows_of(std::vector<Offset>(50, 8));
  EXPECT_EQ(seg_length_min_traffic(eights.data(), 50, 12), 8);
  EXPECT_EQ(seg_length_min_traffic(eights.data(), 0, 12), 1);
  // Never longer than the mean rule, never shorter than an eighth of it.
  const auto mixed = rows_of({1, 200, 3, 60, 7, 1000, 2, 90});
  const int longest = seg_length_for(1363.0 / 8);
  const int len = seg_length_min_traffic(mixed.data(), 8, 8);
  EXPECT_LE(len, longest);
  EXPECT_GE(len, longest / 8);
  EXPECT_EQ(len & (len - 1), 0);
}

TEST(SegPlan, RejectsSegmentLengthsThatAreNotPowersOfTwoInRange) {
  const Offset row_ptr[] = {0, 3};
  for (int bad : {0, -4, 3, 12, 2 * kMaxSegLength}) {
    EXPECT_THROW(seg_sizes(row_ptr, 1, bad), InvalidArgument) << bad;
  }
}

TEST(SegPlan, SizesCountSegmentsAndPadding) {
  const Offset row_ptr[] = {0, 0, 5, 13, 14};  // rows of 0, 5, 8, 1 entries
  const SegSizes s = seg_sizes(row_ptr, 4, 4);
  EXPECT_EQ(s.segments, 0 + 2 + 2 + 1);
  EXPECT_EQ(s.padded_nnz, 20);
  EXPECT_EQ(s.nnz, 14);
}

// Every non-zero placed once, in order, at its row's segments; padding zero with a readable
// column; row_seg_ptr consistent with the row lengths.
template <class S>
void expect_valid_layout(const CsrMatrix<S>& a, const SegmentedCsr<S>& s) {
  const int len = s.seg_length;
  ASSERT_EQ(s.row_seg_ptr.extent(0), std::size_t(a.nrows) + 1);
  EXPECT_EQ(s.row_seg_ptr(0), 0);
  ASSERT_EQ(s.col_idx.extent(0), std::size_t(s.padded_nnz()));
  ASSERT_EQ(s.values.extent(0), std::size_t(s.padded_nnz()));
  EXPECT_EQ(s.padded_nnz(), seg_sizes(a.row_ptr.data(), a.nrows, len).padded_nnz);
  for (Ordinal i = 0; i < a.nrows; ++i) {
    const Offset row_len = a.row_length(i);
    ASSERT_EQ(s.row_seg_ptr(i + 1) - s.row_seg_ptr(i), (row_len + len - 1) / len) << "row " << i;
    const Offset out = s.row_seg_ptr(i) * len;
    for (Offset k = 0; k < row_len; ++k) {
      ASSERT_EQ(s.col_idx(out + k), a.col_idx(a.row_ptr(i) + k));
      ASSERT_EQ(s.values(out + k), a.values(a.row_ptr(i) + k));
    }
    for (Offset k = out + row_len; k < s.row_seg_ptr(i + 1) * len; ++k) {
      ASSERT_EQ(s.values(k), S(0));
      ASSERT_EQ(s.col_idx(k), a.col_idx(a.row_ptr(i + 1) - 1));
    }
  }
  EXPECT_LT(s.padded_nnz() - a.nnz(), Offset(len) * std::max<Ordinal>(a.nrows, 1));
}

TEST(SegPlan, LayoutPlacesEveryNonzeroOnceOnTheZoo) {
  for (const auto& [name, a] : seg::matrices<double>()) {
    for (int len : seg::seg_lengths()) {
      SCOPED_TRACE(name + " seg_length " + std::to_string(len));
      const auto s = to_segmented(a, len);
      if (len == 0) {
        EXPECT_EQ(s.seg_length, seg_length_min_traffic(a.row_ptr.data(), a.nrows, 12));
      }
      expect_valid_layout(a, s);
    }
  }
}

TEST(SegPlan, FillOfARowRangeWritesFromTheRangeStart) {
  const auto a = random_matrix<double>(50, 40, 5, 4);
  const auto whole = to_segmented(a, 4);
  const Ordinal r0 = 20, r1 = 35;
  const Offset first = whole.row_seg_ptr(r0) * 4, count = whole.row_seg_ptr(r1) * 4 - first;
  std::vector<Ordinal> col(count);
  std::vector<double> val(count);
  const CsrPointers<double> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                              a.ncols};
  seg_fill(p, 4, whole.row_seg_ptr.data(), r0, r1, col.data(), val.data());
  for (Offset k = 0; k < count; ++k) {
    EXPECT_EQ(col[k], whole.col_idx(first + k));
    EXPECT_EQ(val[k], whole.values(first + k));
  }
}

// Tile ownership covers every row once; spans are exactly the rows crossing a tile boundary.
void expect_valid_tile_plan(const SegmentedCsr<double>& s, Offset segs_per_tile) {
  const Ordinal m = s.nrows;
  const SegTilePlan p = seg_tile_plan(s.row_seg_ptr.data(), m, segs_per_tile);
  const Offset segments = s.segments();
  if (m == 0) {
    EXPECT_EQ(p.tiles, 0);
    return;
  }
  EXPECT_EQ(p.tiles, std::max<Offset>(1, (segments + segs_per_tile - 1) / segs_per_tile));
  ASSERT_EQ(p.own_begin.size(), std::size_t(p.tiles) + 1);
  EXPECT_EQ(p.own_begin.front(), 0);
  EXPECT_EQ(p.own_begin.back(), m);
  std::vector<Ordinal> spans;
  for (Ordinal b = 0; b < p.tiles; ++b) {
    ASSERT_LE(p.own_begin[b], p.own_begin[b + 1]);
    for (Ordinal i = p.own_begin[b]; i < p.own_begin[b + 1]; ++i) {
      const Offset tile = std::min<Offset>(s.row_seg_ptr(i) / segs_per_tile, p.tiles - 1);
      ASSERT_EQ(tile, b) << "row " << i;
      if (s.row_seg_ptr(i + 1) > (b + 1) * segs_per_tile) spans.push_back(i);
    }
  }
  EXPECT_EQ(p.span_row, spans);
  ASSERT_EQ(p.span_first_tile.size(), spans.size());
  ASSERT_EQ(p.span_last_tile.size(), spans.size());
  for (std::size_t k = 0; k < spans.size(); ++k) {
    EXPECT_EQ(p.span_first_tile[k], s.row_seg_ptr(spans[k]) / segs_per_tile);
    EXPECT_EQ(p.span_last_tile[k], (s.row_seg_ptr(spans[k] + 1) - 1) / segs_per_tile);
    EXPECT_LT(p.span_first_tile[k], p.span_last_tile[k]);
  }
}

TEST(SegPlan, TilePlanOwnsEveryRowOnceAndListsCrossingRows) {
  for (const auto& [name, a] : seg::matrices<double>()) {
    for (int len : {1, 4}) {
      const auto s = to_segmented(a, len);
      for (Offset segs_per_tile : {1, 3, 256}) {
        SCOPED_TRACE(name + " seg_length " + std::to_string(len) + " tile " +
                     std::to_string(segs_per_tile));
        expect_valid_tile_plan(s, segs_per_tile);
      }
    }
  }
}

// The CUDA kernels' combination (seg_spmv.cu) replayed serially from the plan: owners write the
// rows inside their tile, tiles leave head/tail sums, the span pass adds them. Counts writes.
std::vector<double> combine_like_the_gpu(const SegmentedCsr<double>& s, Offset segs_per_tile,
                                         double alpha, const double* x, double beta,
                                         std::vector<double> y, std::vector<int>& writes) {
  const SegTilePlan p = seg_tile_plan(s.row_seg_ptr.data(), s.nrows, segs_per_tile);
  const auto rsp = s.row_seg_ptr;
  const Offset segments = s.segments();
  std::vector<double> seg_sum(segments), head(p.tiles), tail(p.tiles);
  for (Offset g = 0; g < segments; ++g) {
    for (Offset k = g * s.seg_length; k < (g + 1) * s.seg_length; ++k)
      seg_sum[g] += s.values(k) * x[s.col_idx(k)];
  }
  auto sum = [&](Offset begin, Offset end) {
    double r = 0;
    for (Offset g = begin; g < end; ++g) r += seg_sum[g];
    return r;
  };
  auto write = [&](Ordinal i, double ax) {
    y[i] = beta == 0 ? ax : ax + beta * y[i];
    ++writes[i];
  };
  for (Ordinal b = 0; b < p.tiles; ++b) {
    const Offset tile_seg = b * segs_per_tile;
    const Offset tile_end = std::max(tile_seg, std::min(tile_seg + segs_per_tile, segments));
    const Ordinal r0 = p.own_begin[b], r1 = p.own_begin[b + 1];
    for (Ordinal i = r0; i < r1; ++i) {
      if (rsp(i + 1) <= tile_end) write(i, alpha * sum(rsp(i), rsp(i + 1)));
    }
    head[b] = sum(tile_seg, r0 < r1 ? rsp(r0) : tile_end);
    tail[b] = sum(r0 < r1 && rsp(r1) > tile_end ? rsp(r1 - 1) : tile_end, tile_end);
  }
  for (std::size_t k = 0; k < p.span_row.size(); ++k) {
    double total = tail[p.span_first_tile[k]];
    for (Ordinal t = p.span_first_tile[k] + 1; t <= p.span_last_tile[k]; ++t) total += head[t];
    write(p.span_row[k], alpha * total);
  }
  return y;
}

TEST(SegPlan, TileCombinationWritesEveryRowOnceAndMatchesReference) {
  for (const auto& [name, a] : seg::matrices<double>()) {
    for (int len : {1, 4, 64}) {
      const auto s = to_segmented(a, len);
      for (Offset segs_per_tile : {1, 3, 256}) {
        SCOPED_TRACE(name + " seg_length " + std::to_string(len) + " tile " +
                     std::to_string(segs_per_tile));
        const auto x = random_vector<double>(a.ncols, 21);
        for (double beta : {0.0, -1.25}) {
          const auto y0 =
              beta == 0 ? nan_vector<double>(a.nrows) : random_vector<double>(a.nrows, 5);
          std::vector<int> writes(a.nrows, 0);
          const auto y = combine_like_the_gpu(s, segs_per_tile, 0.5, x.data(), beta, y0, writes);
          auto ref = y0;
          reference::spmv(0.5, a, x.data(), beta, ref.data());
          EXPECT_LE(spmv_error(y, ref, 0.5, a, x.data(), beta, y0), reference::tolerance<double>());
          EXPECT_EQ(std::count(writes.begin(), writes.end(), 1), Offset(a.nrows));
        }
      }
    }
  }
}

TEST(SegPlan, TilePlanRejectsEmptyTiles) {
  const Offset row_seg_ptr[] = {0, 1};
  EXPECT_THROW(seg_tile_plan(row_seg_ptr, 1, 0), InvalidArgument);
}

template <class S>
class SegHostSpmv : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SegHostSpmv, Scalars);

TYPED_TEST(SegHostSpmv, MatchesReferenceOnTheZooAndALongRow) {
  using S = TypeParam;
  for (const auto& [name, a] : seg::matrices<S>()) {
    for (int len : seg::seg_lengths()) {
      SCOPED_TRACE(name + " seg_length " + std::to_string(len));
      seg::expect_all_cases_match_reference<S>(
          [len](S alpha, const CsrMatrix<S>& m, const S* x, S beta, S* y) {
            host::spmv(alpha, to_segmented(m, len), x, beta, y);
          },
          a);
    }
  }
}

}  // namespace
}  // namespace kspmv::test

// The host plan of the CUDA long-row path (formats/long_rows.hpp), checked without a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/formats/long_rows.hpp"

namespace kspmv {
namespace {

// Row lengths 5, 0, 3000, 1024, 1025, 7.
const std::vector<Offset> kRowPtr = {0, 5, 5, 3005, 4029, 5054, 5061};
constexpr Ordinal kM = 6;

TEST(LongRowPlan, FindsRowsStrictlyAboveThreshold) {
  EXPECT_EQ(find_long_rows(kRowPtr.data(), kM, 1024), (std::vector<Ordinal>{2, 4}));
  EXPECT_EQ(find_long_rows(kRowPtr.data(), kM, 0), (std::vector<Ordinal>{0, 2, 3, 4, 5}));
  EXPECT_TRUE(find_long_rows(kRowPtr.data(), kM, 5000).empty());
}

TEST(LongRowPlan, ChunksCoverEveryNonZeroOfEveryRowExactlyOnce) {
  const std::vector<Ordinal> rows = {1, 2, 3, 4};
  const LongRowPlan p = plan_long_rows(kRowPtr.data(), kM, rows, 1024);
  ASSERT_EQ(p.rows, rows);
  ASSERT_EQ(p.first_chunk.size(), rows.size() + 1);
  EXPECT_EQ(p.first_chunk, (std::vector<Ordinal>{0, 0, 3, 4, 6}));  // empty row: no chunk
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Offset next = kRowPtr[rows[i]];
    for (Ordinal c = p.first_chunk[i]; c < p.first_chunk[i + 1]; ++c) {
      EXPECT_EQ(p.chunk_begin[c], next);
      EXPECT_GT(p.chunk_end[c], p.chunk_begin[c]);
      EXPECT_LE(p.chunk_end[c] - p.chunk_begin[c], 1024);
      next = p.chunk_end[c];
    }
    EXPECT_EQ(next, kRowPtr[rows[i] + 1]) << "row " << rows[i];
  }
}

TEST(LongRowPlan, ChunkIsThePowerOfTwoAtLeastTheRootWithin128And1024) {
  EXPECT_EQ(long_row_chunk_nnz(0), 128);
  EXPECT_EQ(long_row_chunk_nnz(13799), 128);  // brainpc2: sqrt 117.5
  EXPECT_EQ(long_row_chunk_nnz(128 * 128), 128);
  EXPECT_EQ(long_row_chunk_nnz(128 * 128 + 1), 256);
  EXPECT_EQ(long_row_chunk_nnz(100000), 512);
  EXPECT_EQ(long_row_chunk_nnz(512 * 512 + 1), 1024);
  EXPECT_EQ(long_row_chunk_nnz(2300000), 1024);  // FullChip's longest row
}

TEST(LongRowPlan, RejectsBadChunkSizeAndRows) {
  EXPECT_THROW(plan_long_rows(kRowPtr.data(), kM, {2}, 0), InvalidArgument);
  EXPECT_THROW(plan_long_rows(kRowPtr.data(), kM, {6}, 64), InvalidArgument);
  EXPECT_THROW(plan_long_rows(kRowPtr.data(), kM, {-1}, 64), InvalidArgument);
}

}  // namespace
}  // namespace kspmv

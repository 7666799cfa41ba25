// What the tests of the row profile computed on the device (backends/cuda/row_profile.hpp)
// compare: its statistics of every row, and of the rows of at most kShortRowCut non-zeros,
// against analysis::row_stats of the same row pointer on the host.
#pragma once

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>

#include "backends/cuda/row_profile.hpp"
#include "kspmv/analysis/row_stats.hpp"

namespace kspmv::test {

inline void expect_profile_of(const cuda::RowProfile& p, const Offset* row_ptr, Ordinal m,
                              Ordinal ncols, const std::string& what) {
  for (const auto& [stats, cut] : {std::pair{p.all, std::numeric_limits<Offset>::max()},
                                   std::pair{p.short_rows, cuda::kShortRowCut}}) {
    const auto ref = analysis::row_stats(row_ptr, m, ncols, cut);
    EXPECT_EQ(stats.nrows, ref.nrows) << what;
    EXPECT_EQ(stats.nnz, ref.nnz) << what;
    EXPECT_EQ(stats.min_row, ref.min_row) << what;
    EXPECT_EQ(stats.max_row, ref.max_row) << what;
    EXPECT_EQ(stats.longest_row, ref.longest_row) << what;
    EXPECT_EQ(stats.empty_rows, ref.empty_rows) << what;
    EXPECT_EQ(stats.rows_above, ref.rows_above) << what;
    EXPECT_NEAR(stats.mean_row, ref.mean_row, 1e-12 * (1 + ref.mean_row)) << what;
    EXPECT_NEAR(stats.stddev_row, ref.stddev_row, 1e-9 * (1 + ref.stddev_row)) << what;
  }
}

}  // namespace kspmv::test

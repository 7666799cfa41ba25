// Row statistics and MSREP's power-law exponent R on hand-made and generated matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kspmv/analysis/row_stats.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/gen/generators.hpp"
#include "test_matrices.hpp"

namespace kspmv::analysis {
namespace {

// A row pointer array with the given row lengths.
HostView<Offset> pointers(const std::vector<Offset>& lengths) {
  HostView<Offset> p("row_ptr", lengths.size() + 1);
  for (std::size_t i = 0; i < lengths.size(); ++i) p(i + 1) = p(i) + lengths[i];
  return p;
}

TEST(AnalysisRowStats, CountsAHandMadeMatrixExactly) {
  // Rows of length 0, 3, 1, 40, 0, 300: two empty, mean 344/6.
  const auto s = analyze(pointers({0, 3, 1, 40, 0, 300}), 500);
  EXPECT_EQ(s.nrows, 6);
  EXPECT_EQ(s.ncols, 500);
  EXPECT_EQ(s.nnz, 344);
  EXPECT_EQ(s.min_row, 0);
  EXPECT_EQ(s.max_row, 300);
  EXPECT_EQ(s.empty_rows, 2);
  EXPECT_DOUBLE_EQ(s.mean_row, 344.0 / 6);
  double sq = 0;
  for (double k : {0, 3, 1, 40, 0, 300}) sq += (k - 344.0 / 6) * (k - 344.0 / 6);
  EXPECT_DOUBLE_EQ(s.stddev_row, std::sqrt(sq / 6));
  using P = std::pair<Offset, Ordinal>;
  EXPECT_EQ(s.rows_above, (std::vector<P>{{32, 2}, {256, 1}, {4096, 0}, {65536, 0}}));
}

TEST(AnalysisRowStats, HandlesMatricesWithoutRowsOrEntries) {
  const auto none = analyze(HostView<Offset>(), 0);
  EXPECT_EQ(none.nrows, 0);
  EXPECT_EQ(none.nnz, 0);
  EXPECT_EQ(none.rows_above.size(), 4u);
  EXPECT_TRUE(std::isnan(none.power_law_r));
  const auto empty = analyze(pointers({0, 0, 0}), 7);
  EXPECT_EQ(empty.empty_rows, 3);
  EXPECT_EQ(empty.max_row, 0);
  EXPECT_EQ(empty.mean_row, 0.0);
  EXPECT_TRUE(std::isnan(empty.power_law_r));
}

TEST(AnalysisRowStats, MatrixOverloadAgreesOnTheZoo) {
  for (const auto& [name, a] : test::zoo<double>()) {
    const auto s = analyze(a);
    const auto r = analyze(a.row_ptr, a.ncols);
    EXPECT_EQ(s.nnz, r.nnz) << name;
    EXPECT_EQ(s.max_row, r.max_row) << name;
    EXPECT_EQ(s.empty_rows, r.empty_rows) << name;
    // R of the matrix is that of its columns, i.e. of the CSC column pointers.
    const double columns = power_law_exponent(to_csc(a).col_ptr);
    if (std::isnan(columns))
      EXPECT_TRUE(std::isnan(s.power_law_r)) << name;
    else
      EXPECT_DOUBLE_EQ(s.power_law_r, columns) << name;
  }
}

TEST(AnalysisRowStats, SummaryIsOneLineWithTheNumbers) {
  const auto line = summary(analyze(gen::laplace2d<double>(10, 10)));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  for (const char* part : {"100 x 100", "nnz 460", "mean 4.6", "max 5", "0 empty rows", "R="})
    EXPECT_NE(line.find(part), std::string::npos) << part << " in: " << line;
}

TEST(AnalysisPowerLaw, RecoversTheExponentOfAPowerLaw) {
  // round(2^16 k^-R) rows of length k for k < 512 (whole power-of-two bins).
  for (double r : {1.0, 1.5, 2.0, 2.5, 3.0}) {
    std::vector<Offset> lengths;
    for (Offset k = 1; k < 512; ++k)
      lengths.insert(lengths.end(), std::llround(65536 * std::pow(double(k), -r)), k);
    EXPECT_NEAR(power_law_exponent(pointers(lengths)), r, 0.05) << r;
  }
}

TEST(AnalysisPowerLaw, SeparatesRmatFromStencils) {
  const double kron = analyze(gen::kronecker<double>(14, 16, 1)).power_law_r;
  EXPECT_GE(kron, 1.0);  // MSREP Sec. 5.2: R in [1, 4] marks a strong power law
  EXPECT_LE(kron, 4.0);
  EXPECT_LT(analyze(gen::laplace2d<double>(100, 100)).power_law_r, 0.0);
  EXPECT_TRUE(std::isnan(analyze(gen::stencil3d_7<double>(1)).power_law_r));  // one count only
}

TEST(AnalysisRowStats, RejectsColumnIndicesOutsideTheMatrix) {
  auto a = test::random_matrix<double>(10, 10, 3, 1);
  a.col_idx(0) = 10;
  EXPECT_THROW(analyze(a), InvalidArgument);
}

}  // namespace
}  // namespace kspmv::analysis

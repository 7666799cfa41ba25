// Row statistics and MSREP's power-law exponent R on hand-made and generated matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kspmv/analysis/analyze.hpp"
#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/gen/generators.hpp"
#include "testing/test_matrices.hpp"

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

// Row statistics with the given non-zeros, longest row, mean and coefficient of variation.
RowStats shape(Offset nnz, Offset max, double mean, double cv) {
  RowStats s;
  s.nnz = nnz, s.max_row = max, s.mean_row = mean, s.stddev_row = cv * mean;
  s.nrows = static_cast<Ordinal>(static_cast<double>(nnz) / mean);
  return s;
}

// The Kernel::Auto rule of the CUDA backend (kernel_choice.hpp) on row statistics alone.
TEST(AutoRule, FollowsTheDocumentedThresholds) {
  const Offset big = kAutoLatencyNnz;
  EXPECT_EQ(auto_kernel(RowStats{}, 8), Kernel::CsrVector);
  // Launch-bound: csr-vector, long rows (in its one launch) or not.
  EXPECT_EQ(auto_kernel(shape(20000, 10000, 20, 5), 8), Kernel::CsrVector);
  EXPECT_EQ(auto_kernel(shape(179395, 13799, 6.5, 20), 8), Kernel::CsrVector);  // brainpc2
  EXPECT_EQ(auto_kernel(shape(179395, 13799, 6.5, 20), 4), Kernel::CsrVector);
  EXPECT_EQ(auto_kernel(shape(355460, 614, 44.3, 0.46), 8), Kernel::CsrVector);  // bcsstk38
  EXPECT_EQ(auto_kernel(shape(355460, 614, 44.3, 0.46), 4), Kernel::CsrVector);
  EXPECT_EQ(auto_kernel(shape(50000, 50, 5, 1.5), 8), Kernel::CsrVector);
  EXPECT_EQ(auto_kernel(shape(50000, 5, 5, 0.05), 8), Kernel::CsrVector);
  EXPECT_EQ(auto_kernel(shape(100000, 16, 6, 0.22), 8), Kernel::CsrVector);
  EXPECT_EQ(auto_kernel(shape(50000, 1025, 5, 1.5), 8), Kernel::CsrVector);
  // Bandwidth-bound.
  EXPECT_EQ(auto_kernel(shape(big, 10000, 30, 5), 8), Kernel::Seg);       // power law, double
  EXPECT_EQ(auto_kernel(shape(big, 10000, 30, 5), 4), Kernel::Cusparse);  // float
  EXPECT_EQ(auto_kernel(shape(big, 100, 30, 1.2), 8), Kernel::Seg);
  EXPECT_EQ(auto_kernel(shape(big, 100, 30, 1.2), 4), Kernel::Cusparse);
  EXPECT_EQ(auto_kernel(shape(big, 5, 5, 0.02), 8), Kernel::CsrVector);  // 2D stencil
  EXPECT_EQ(auto_kernel(shape(big, 5, 5, 0.02), 4), Kernel::CsrVector);
  EXPECT_EQ(auto_kernel(shape(big, 27, 26.6, 0.1), 8), Kernel::CsrVector);  // 3D stencil
  EXPECT_EQ(auto_kernel(shape(big, 27, 26.6, 0.1), 4), Kernel::CsrVector);  // float too
  EXPECT_EQ(auto_kernel(shape(big, 30, 15, 0.26), 8), Kernel::CsrVector);   // geometric graph
  EXPECT_EQ(auto_kernel(shape(big, 30, 15, 0.26), 4), Kernel::Cusparse);    // float
  EXPECT_EQ(auto_kernel(shape(big, 8, 8, 0), 8), Kernel::Seg);              // uniform
  EXPECT_EQ(auto_kernel(shape(big, 8, 8, 0), 4), Kernel::Seg);
  EXPECT_EQ(auto_kernel(shape(big, 16, 16, 0), 8), Kernel::Seg);  // uniform 1e7 x 16 (issue 35)
  EXPECT_EQ(auto_kernel(shape(big, 18, 17, 0.1), 8), Kernel::CsrVector);
  EXPECT_EQ(auto_kernel(shape(big, 4, 2.07, 0.3), 4), Kernel::CsrVector);  // k-mer
}

// CSR-Vector's lanes per row (kernel_choice.hpp).
TEST(CsrVectorLanes, FollowTheDocumentedRule) {
  const Ordinal many = 1 << 18;
  EXPECT_EQ(csr_vector_lanes(5, 0.01, 16 << 20), 1);  // 2D stencil
  EXPECT_EQ(csr_vector_lanes(5, 0.01, many - 1), 4);  // latency-bound: more lanes
  EXPECT_EQ(csr_vector_lanes(2, 0.3, 60 << 20), 4);   // irregular short rows
  EXPECT_EQ(csr_vector_lanes(26.7, 0.06, 4 << 20), 4);
  EXPECT_EQ(csr_vector_lanes(5, 0.3, 10000), 8);  // capped by the mean rounded up
  EXPECT_EQ(csr_vector_lanes(60, 0.3, 2910), 32);
  EXPECT_EQ(csr_vector_lanes(200, 0.3, 100), 32);
  EXPECT_EQ(csr_vector_lanes(22, 0.3, 20000), 16);       // 20000 * 16 >= 2^18
  EXPECT_EQ(csr_vector_lanes(129, 0.01, 16 << 20), 32);  // long rows: <= 8 entries per lane
  EXPECT_EQ(csr_vector_lanes(64, 0.01, 16 << 20), 8);
  EXPECT_EQ(csr_vector_lanes(65, 0.01, 16 << 20), 16);
}

TEST(RowStats, OfAStencilAndOfOneLongRowWithAndWithoutIt) {
  const std::vector<Offset> stencil = {0, 5, 10, 15, 20};  // four rows of 5
  const RowStats s = row_stats(stencil.data(), 4, 4);
  EXPECT_EQ(s.nnz, 20);
  EXPECT_EQ(s.max_row, 5);
  EXPECT_DOUBLE_EQ(s.mean_row, 5);
  EXPECT_DOUBLE_EQ(s.cv(), 0);
  const std::vector<Offset> one_long = {0, 1, 1, 9001, 9002};
  const RowStats l = row_stats(one_long.data(), 4, 9001);
  EXPECT_EQ(l.max_row, 9000);
  EXPECT_GT(l.cv(), 1.5);
  EXPECT_EQ(auto_kernel(l, 8), Kernel::CsrVector);  // launch-bound: its long row in its launch
  const RowStats short_rows = row_stats(one_long.data(), 4, 9001, 10);  // the long row left out
  EXPECT_EQ(short_rows.nrows, 3);
  EXPECT_EQ(short_rows.nnz, 2);
  EXPECT_EQ(short_rows.max_row, 1);
  EXPECT_EQ(short_rows.empty_rows, 1);
}

}  // namespace
}  // namespace kspmv::analysis

// HBP (paper 3) on the host: the format's invariants for the hash and both baselines, the host
// kernel against the long-double oracle, the Fig. 6 balance metric, and the host Operator.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <numeric>

#include "backends/host/hbp_spmv.hpp"
#include "hbp_test_cases.hpp"
#include "kspmv/operator.hpp"

namespace kspmv::test {
namespace {

template <class S>
HbpMatrix<S> build(const CsrMatrix<S>& a, const HbpParams& p,
                   HbpReorder reorder = HbpReorder::Hash) {
  const auto c = pointers(a);
  return build_hbp(c, p, hbp_sample_hash(c.row_ptr, c.col, c.m, c.n, p), reorder);
}

// Every array of `h` is consistent: blocks in schedule order, the table a permutation per block,
// the add_sign chains of a row's elements within its group, each element's column in its block.
template <class S>
void expect_well_formed(const HbpMatrix<S>& h, const CsrMatrix<S>& a) {
  const Ordinal N = h.params.block_rows, G = h.groups(), B = h.blocks();
  ASSERT_EQ(h.nnz(), a.nnz());
  ASSERT_EQ(h.begin_nnz.size(), std::size_t(B) * G + 1);
  ASSERT_EQ(h.output_hash.size(), std::size_t(B) * N);
  ASSERT_EQ(h.combine_ptr.size(), std::size_t(h.row_blocks()) + 1);
  EXPECT_TRUE(std::is_sorted(h.begin_nnz.begin(), h.begin_nnz.end()));
  for (Ordinal b = 1; b < B; ++b) {
    EXPECT_LT(std::make_pair(h.block_col[b - 1], h.block_row[b - 1]),
              std::make_pair(h.block_col[b], h.block_row[b]));
  }
  Offset seen = 0;
  for (Ordinal b = 0; b < B; ++b) {
    std::vector<std::uint16_t> perm(h.output_hash.begin() + std::size_t(b) * N,
                                    h.output_hash.begin() + std::size_t(b + 1) * N);
    std::sort(perm.begin(), perm.end());
    for (Ordinal t = 0; t < N; ++t) ASSERT_EQ(perm[t], t) << "block " << b;
    for (Ordinal g = 0; g < G; ++g) {
      const Offset g0 = h.begin_nnz[std::size_t(b) * G + g],
                   g1 = h.begin_nnz[std::size_t(b) * G + g + 1];
      for (int l = 0; l < kHbpWarp; ++l) {
        const std::size_t slot = std::size_t(b) * N + g * kHbpWarp + l;
        if (h.zero_row[slot] < 0) continue;
        for (Offset j = g0 + l - h.zero_row[slot];; j += h.add_sign[j]) {
          ASSERT_GE(j, g0);
          ASSERT_LT(j, g1);
          ++seen;
          if (h.add_sign[j] < 0) break;
          ASSERT_GT(h.add_sign[j], 0);
        }
      }
    }
  }
  EXPECT_EQ(seen, a.nnz());  // every element on exactly one row chain
  const Ordinal last = h.ncols - 1;
  for (Ordinal b = 0; b < B; ++b)
    for (Offset j = h.begin_nnz[std::size_t(b) * G]; j < h.begin_nnz[std::size_t(b + 1) * G]; ++j)
      ASSERT_LE(Offset(h.block_col[b]) * h.params.block_cols + h.col[j], last);
}

template <class S>
class Hbp : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Hbp, Scalars);

TYPED_TEST(Hbp, FormatIsWellFormedForTheHashAndBothBaselines) {
  using S = TypeParam;
  for (const auto& [name, a] : hbp::matrices<S>()) {
    for (const auto& p : hbp::params()) {
      for (HbpReorder r : {HbpReorder::Hash, HbpReorder::Sort, HbpReorder::Dp}) {
        SCOPED_TRACE(name + ", " + hbp::describe(p) + ", reorder " + std::to_string(int(r)));
        const auto h = build(a, p, r);
        expect_well_formed(h, a);
        if (r == HbpReorder::Dp) EXPECT_GE(h.dp_padded_nnz, a.nnz());
      }
    }
  }
}

TEST(HbpHash, AggregatesDispersesAndMapsIntoTheTable) {
  const HbpHash h{2, 4, 56};  // a = 2, c = 4, b = 512 / 9
  EXPECT_EQ(hbp_hash(h, 0), 0);
  EXPECT_EQ(hbp_hash(h, 3), 3);              // aggregated to 0, offset 3 of 4
  EXPECT_EQ(hbp_hash(h, 4), 56);             // aggregated to 1
  EXPECT_EQ(hbp_hash(h, 35), 8 * 56 + 3);    // 35 >> 2 = 8
  EXPECT_EQ(hbp_hash(h, 1000), 8 * 56 + 3);  // beyond 8: treated as 8 (Sec. III-B)
  const HbpHash coarse{7, 56, 56};           // 2^a = 128 > b: 128 counts onto 56 slots
  EXPECT_EQ(hbp_hash(coarse, 127), 55);
  EXPECT_EQ(hbp_hash(coarse, 128 + 64), 56 + 28);
  for (int c = 1; c < 3000; ++c) EXPECT_LE(hbp_hash(coarse, c - 1), hbp_hash(coarse, c));
  const HbpParams p;
  const auto a = gen::from_spec<double>("uniform:rows=20000,k=40");  // ~40 per 4096-col block
  const auto s = hbp_sample_hash(a.row_ptr.data(), a.col_idx.data(), a.nrows, a.ncols, p);
  EXPECT_EQ(s.spread, 56);
  EXPECT_LE(s.shift, 1);  // 20000 columns: 5 blocks of ~8 entries per row
  EXPECT_EQ(s.fine, 1 << s.shift);
  const auto wide = gen::from_spec<double>("uniform:rows=2000,cols=4096,k=300");
  const auto w =
      hbp_sample_hash(wide.row_ptr.data(), wide.col_idx.data(), wide.nrows, wide.ncols, p);
  EXPECT_GE(w.shift, 5);  // ~300 per block: 300 >> 5 = 9, 300 >> 6 = 4
  EXPECT_EQ(w.fine, std::min(1 << w.shift, 56));
}

TEST(HbpSplit, FixedPartIsEqualPerWarpAndTheRestIsCompetitive) {
  EXPECT_EQ(hbp_split(1000, 10, 0.75).per_warp, 75);
  EXPECT_EQ(hbp_split(1000, 10, 0.75).fixed, 750);
  EXPECT_EQ(hbp_split(1000, 7, 0.75).per_warp, 107);
  EXPECT_EQ(hbp_split(1000, 7, 0.75).fixed, 749);
  EXPECT_EQ(hbp_split(5, 10, 1.0).fixed, 0);  // fewer blocks than warps: all competitive
  EXPECT_EQ(hbp_split(0, 10, 0.5).fixed, 0);
}

TEST(HbpParams, TheLargestBlocksWork) {
  const auto a = seg::long_row_among_short<double>();
  const auto h = build(a, HbpParams{1024, 65536, 1.0});
  expect_well_formed(h, a);
  const auto x = random_vector<double>(a.ncols, 3);
  std::vector<double> y(a.nrows), ref(a.nrows);
  host::spmv(1.0, h, x.data(), 0.0, y.data());
  reference::spmv(1.0, a, x.data(), 0.0, ref.data());
  EXPECT_LE(spmv_error(y, ref, 1.0, a, x.data(), 0.0, {}), 1e-12);
}

TEST(HbpParams, RejectsBadSizes) {
  const auto a = gen::from_spec<double>("laplace2d:n=10");
  const auto c = pointers(a);
  const HbpHash h;
  for (const HbpParams& p :
       {HbpParams{0, 64, 0.5}, HbpParams{48, 64, 0.5}, HbpParams{2048, 64, 0.5},
        HbpParams{32, 0, 0.5}, HbpParams{32, 70000, 0.5}, HbpParams{32, 64, 1.5}})
    EXPECT_THROW(build_hbp(c, p, h), InvalidArgument) << hbp::describe(p);
}

TYPED_TEST(Hbp, HostKernelMatchesReference) {
  using S = TypeParam;
  for (const auto& [name, a] : hbp::matrices<S>()) {
    for (const auto& p : hbp::params()) {
      for (HbpReorder r : {HbpReorder::Hash, HbpReorder::Sort}) {
        SCOPED_TRACE(name + ", " + hbp::describe(p) + ", reorder " + std::to_string(int(r)));
        seg::expect_all_cases_match_reference<S>(
            [&](S alpha, const CsrMatrix<S>& m, const S* x, S beta, S* y) {
              host::spmv(alpha, build(m, p, r), x, beta, y);
            },
            a);
      }
    }
  }
}

TYPED_TEST(Hbp, HostOperatorRunsHbp) {
  using S = TypeParam;
  const auto a = gen::from_spec<S>("kron:scale=11");
  Options o;
  o.kernel = Kernel::Hbp;
  Operator<S> op(a, o);
  EXPECT_EQ(op.kernel(), Kernel::Hbp);
  const auto x = random_vector<S>(a.ncols, 5);
  const auto y0 = nan_vector<S>(a.nrows);
  auto y = y0, ref = y0;
  op.apply(S(1), x.data(), S(0), y.data());
  reference::spmv(S(1), a, x.data(), S(0), ref.data());
  EXPECT_LE(spmv_error(y, ref, S(1), a, x.data(), S(0), y0), reference::tolerance<S>());
}

// Fig. 6: the mean per-warp-group standard deviation of row lengths must not grow by hashing
// (nor by sorting); reported for every matrix.
TEST(HbpBalance, HashingDoesNotIncreaseTheWarpGroupStdDev) {
  std::vector<std::pair<std::string, CsrMatrix<double>>> all = hbp::matrices<double>();
  for (const auto& f : hbp::shared_matrix_files(300000)) {
    std::string stem = f.filename().string();
    all.emplace_back(stem.substr(0, stem.find(".mtx")), io::read_matrix_market<double>(f.string()));
  }
  for (const auto& [name, a] : all) {
    const HbpParams p;
    const HbpBalance hash = hbp_balance(build(a, p));
    const HbpBalance sort = hbp_balance(build(a, p, HbpReorder::Sort));
    std::cout << "[ balance  ] " << name << ": groups " << hash.groups << ", std-dev before "
              << hash.before << ", after hash " << hash.after << ", after sort " << sort.after
              << "\n";
    EXPECT_LE(hash.after, hash.before + 1e-12) << name;
    EXPECT_LE(sort.after, sort.before + 1e-12) << name;
    EXPECT_DOUBLE_EQ(hash.before, sort.before) << name;
  }
}

TEST(HbpShared, HostKernelMatchesReferenceOnTheSharedMatrices) {
  const auto files = hbp::shared_matrix_files(300000);
  if (files.empty()) GTEST_SKIP() << "no shared matrices";
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    const auto a = io::read_matrix_market<double>(f.string());
    seg::expect_all_cases_match_reference<double>(
        [&](double alpha, const CsrMatrix<double>& m, const double* x, double beta, double* y) {
          host::spmv(alpha, build(m, HbpParams{}), x, beta, y);
        },
        a);
  }
}

}  // namespace
}  // namespace kspmv::test

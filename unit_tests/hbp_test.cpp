// HBP (paper 3) on the host: the format's invariants for the hash and both baselines, the host
// kernel against the long-double oracle, the Fig. 6 balance metric, and the host Operator.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <numeric>

#include "backends/kokkos/hbp_spmv.hpp"
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

// Every array of `h` is consistent: blocks in schedule order, the table bounded by nnz and a
// permutation of the (row, block) pairs with entries, each pair's add_sign chain within its
// block holding exactly the row's entries of that block, the combine part listing each row's
// pairs by block column.
template <class S>
void expect_well_formed(const HbpMatrix<S>& h, const CsrMatrix<S>& a) {
  const Ordinal N = h.params.block_rows, M = h.params.block_cols, B = h.blocks();
  ASSERT_EQ(h.nnz(), a.nnz());
  ASSERT_EQ(h.table_ptr.size(), std::size_t(B) + 1);
  ASSERT_EQ(h.group_ptr.size(), std::size_t(B) + 1);
  ASSERT_EQ(h.begin_nnz.size(), std::size_t(h.group_ptr.back()) + 1);
  ASSERT_EQ(h.combine_ptr.size(), std::size_t(a.nrows) + 1);
  ASSERT_EQ(h.slots(), h.combine_ptr.back());
  ASSERT_LE(h.slots(), a.nnz());
  ASSERT_EQ(h.table_ptr.front(), 0);
  ASSERT_EQ(h.table_ptr.back(), h.slots());
  ASSERT_EQ(h.group_ptr.front(), 0);
  EXPECT_TRUE(std::is_sorted(h.begin_nnz.begin(), h.begin_nnz.end()));
  EXPECT_TRUE(std::is_sorted(h.combine_ptr.begin(), h.combine_ptr.end()));
  for (Ordinal b = 1; b < B; ++b) {
    EXPECT_LT(std::make_pair(h.block_col[b - 1], h.block_row[b - 1]),
              std::make_pair(h.block_col[b], h.block_row[b]));
  }
  // The expected pairs, row-major: row i's entries by column, cut into block-column runs.
  std::vector<std::pair<Ordinal, S>> entries;
  std::vector<Offset> run_begin;
  std::vector<Ordinal> pair_row;
  for (Ordinal i = 0; i < a.nrows; ++i) {
    const std::size_t r0 = entries.size();
    for (Offset k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      entries.emplace_back(a.col_idx[k], a.values[k]);
    std::sort(entries.begin() + r0, entries.end());
    for (std::size_t k = r0; k < entries.size(); ++k) {
      if (k == r0 || entries[k].first / M != entries[k - 1].first / M) {
        run_begin.push_back(static_cast<Offset>(k));
        pair_row.push_back(i);
      }
    }
    ASSERT_EQ(Offset(run_begin.size()), h.combine_ptr[i + 1]) << "row " << i;
  }
  run_begin.push_back(static_cast<Offset>(entries.size()));
  std::vector<char> placed(h.slots(), 0);
  Offset seen = 0;
  for (Ordinal b = 0; b < B; ++b) {
    const Ordinal t0 = h.table_ptr[b], k = h.table_ptr[b + 1] - t0;
    ASSERT_GE(k, 1) << "block " << b;
    ASSERT_LE(k, N) << "block " << b;
    ASSERT_EQ(h.group_ptr[b + 1] - h.group_ptr[b], (k + kHbpWarp - 1) / kHbpWarp) << "block " << b;
    for (Ordinal g0 = 0; g0 < k; g0 += kHbpWarp) {
      const Ordinal g = h.group_ptr[b] + g0 / kHbpWarp;
      const Offset j0 = h.begin_nnz[g];
      Offset group_nnz = 0;
      for (Ordinal s = g0; s < std::min(k, g0 + kHbpWarp); ++s) {
        const Ordinal q = h.output_hash[t0 + s];
        ASSERT_GE(q, 0);
        ASSERT_LT(q, h.slots());
        ASSERT_FALSE(placed[q]) << "pair " << q << " twice in the table";
        placed[q] = 1;
        ASSERT_EQ(pair_row[q] / N, h.block_row[b]) << "pair " << q;
        std::vector<std::pair<Ordinal, S>> got;
        for (Offset j = j0 + (s - g0);; j += h.add_sign[j]) {
          ASSERT_LT(j, h.begin_nnz[g + 1]);
          got.emplace_back(h.block_col[b] * M + h.col[j], h.data[j]);
          if (h.add_sign[j] < 0) break;
          ASSERT_GT(h.add_sign[j], 0);
        }
        std::sort(got.begin(), got.end());
        const std::vector<std::pair<Ordinal, S>> want(entries.begin() + run_begin[q],
                                                      entries.begin() + run_begin[q + 1]);
        ASSERT_EQ(got, want) << "block " << b << ", pair " << q;
        ASSERT_EQ(want.front().first / M, h.block_col[b]);
        group_nnz += static_cast<Offset>(got.size());
      }
      ASSERT_EQ(j0 + group_nnz, h.begin_nnz[g + 1]) << "block " << b << ", group " << g;
      seen += group_nnz;
    }
  }
  EXPECT_EQ(seen, a.nnz());  // every element on exactly one row chain
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

// The format and the kernel's partial results scale with the non-zeros, not with the grid of
// 2D blocks: at most 3x the CSR's bytes where nearly every block of the grid holds a few
// entries (a k-mer graph, a random matrix of 10^6 columns).
TYPED_TEST(Hbp, MemoryIsBoundedByTheNonZerosNotByTheBlockGrid) {
  using S = TypeParam;
  for (const char* spec : {"kmer:rows=100000", "uniform:rows=20000,cols=1000000,k=4"}) {
    const auto a = gen::from_spec<S>(spec);
    const double csr =
        double(a.nnz()) * (sizeof(Ordinal) + sizeof(S)) + (double(a.nrows) + 1) * sizeof(Offset);
    for (HbpReorder r : {HbpReorder::Hash, HbpReorder::Sort}) {
      const auto h = build(a, HbpParams{}, r);
      const double bytes = double(h.bytes()) + double(h.slots()) * sizeof(S);  // + partial
      EXPECT_LE(bytes / csr, 3.0) << spec << ", reorder " << int(r) << ": " << h.slots()
                                  << " table slots for " << a.nnz() << " non-zeros";
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

// CSR-Partial/Full-Overlap host preprocessing (paper 4, Alg. 3, 6, 7) and the host twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "backends/kokkos/batched_csr_spmv.hpp"
#include "batched_test_matrices.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/batched_csr.hpp"

namespace kspmv::test {
namespace {

std::vector<Offset> row_ptr_of(const std::vector<Offset>& lengths) {
  std::vector<Offset> p(lengths.size() + 1, 0);
  for (std::size_t i = 0; i < lengths.size(); ++i) p[i + 1] = p[i] + lengths[i];
  return p;
}

// The big-batch size batch_plan.hpp promises for `p` and the plan's batches.
Offset big_batch_size(Offset nnz, const BatchParams& p, const BatchPlan& plan) {
  Offset widest = 1;
  for (const BatchInfo& b : plan.batches) widest = std::max(widest, b.nnz_end - b.nnz_begin);
  Offset size = std::max((nnz + p.big_batches - 1) / p.big_batches, widest);
  if (p.big_batch_nnz > 0) size = std::min(size, p.big_batch_nnz);
  return std::min(size, kMaxBigBatchNnz);
}

// Big batches: copy ranges tile [0, nnz) in order, each within the size and the row limit; each
// batch lies inside exactly one; every long row's non-zeros lie in consecutive ones, which list
// it; a big batch is cut only where the next batch would not fit, or inside a long row once full.
void expect_valid_big_batches(const std::vector<Offset>& row_ptr, const BatchParams& p,
                              const BatchPlan& plan) {
  const Ordinal m = static_cast<Ordinal>(row_ptr.size()) - 1;
  const Offset nnz = row_ptr[m];
  const Offset size = big_batch_size(nnz, p, plan);
  const auto& big = plan.big_batches;
  ASSERT_GE(big.size(), 1u);
  EXPECT_EQ(big.front().nnz_begin, 0);
  EXPECT_EQ(big.back().nnz_end, nnz);
  EXPECT_EQ(big.front().batch_begin, 0);
  EXPECT_EQ(big.back().batch_end, Ordinal(plan.batches.size()));
  EXPECT_EQ(big.front().long_begin, 0);
  EXPECT_EQ(big.back().long_end, Ordinal(plan.long_rows.size()));
  for (std::size_t i = 0; i < big.size(); ++i) {
    const BigBatchInfo& g = big[i];
    SCOPED_TRACE("big batch " + std::to_string(i));
    EXPECT_LE(g.nnz_end - g.nnz_begin, size);
    if (p.big_batch_rows > 0) EXPECT_LE(g.row_end - g.row_begin, p.big_batch_rows);
    if (i + 1 < big.size()) {
      const BigBatchInfo& h = big[i + 1];
      EXPECT_EQ(g.nnz_end, h.nnz_begin);
      EXPECT_EQ(g.batch_end, h.batch_begin);
      EXPECT_LE(h.long_begin, g.long_end);
      EXPECT_GE(h.long_begin, g.long_end - 1);
      EXPECT_LT(g.nnz_begin, g.nnz_end);  // only the last may be empty
    }
    // Its batches, inside its range, spanning exactly its rows.
    if (g.batch_begin < g.batch_end) {
      EXPECT_EQ(g.row_begin, plan.batches[g.batch_begin].row_begin);
      EXPECT_EQ(g.row_end, plan.batches[g.batch_end - 1].row_end);
    } else {
      EXPECT_EQ(g.row_begin, g.row_end);
    }
    for (Ordinal j = g.batch_begin; j < g.batch_end; ++j) {
      EXPECT_GE(plan.batches[j].nnz_begin, g.nnz_begin) << "batch " << j;
      EXPECT_LE(plan.batches[j].nnz_end, g.nnz_end) << "batch " << j;
    }
    // Its long rows: exactly those with non-zeros in its range.
    for (Ordinal l = 0; l < Ordinal(plan.long_rows.size()); ++l) {
      const Ordinal r = plan.long_rows[l];
      const bool inside = row_ptr[r] < g.nnz_end && row_ptr[r + 1] > g.nnz_begin;
      EXPECT_EQ(inside, l >= g.long_begin && l < g.long_end) << "long row " << r;
    }
    // Cut only where needed: the next batch would not fit, or the range is full.
    if (i + 1 < big.size()) {
      const BigBatchInfo& h = big[i + 1];
      const Offset used = g.nnz_end - g.nnz_begin;
      const bool full = used == size;
      const bool next_batch_overflows =
          h.batch_begin < h.batch_end && plan.batches[h.batch_begin].nnz_begin == g.nnz_end &&
          (used + plan.batches[h.batch_begin].nnz_end - plan.batches[h.batch_begin].nnz_begin >
               size ||
           (p.big_batch_rows > 0 && g.batch_begin < g.batch_end &&
            plan.batches[h.batch_begin].row_end - g.row_begin > p.big_batch_rows));
      EXPECT_TRUE(full || next_batch_overflows) << "cut at " << g.nnz_end << " not needed";
    }
  }
}

// Every invariant batch_plan.hpp promises.
void expect_valid_plan(const std::vector<Offset>& row_ptr, const BatchParams& p,
                       const BatchPlan& plan) {
  const Ordinal m = static_cast<Ordinal>(row_ptr.size()) - 1;
  const Offset nnz = row_ptr[m];
  // Batches and long rows cover every row once, in order; batches are greedy (Alg. 3).
  std::vector<int> covered(m, 0);
  for (Ordinal r : plan.long_rows) {
    EXPECT_GT(row_ptr[r + 1] - row_ptr[r], p.max_batch_size);
    ++covered[r];
  }
  EXPECT_TRUE(std::is_sorted(plan.long_rows.begin(), plan.long_rows.end()));
  for (std::size_t j = 0; j < plan.batches.size(); ++j) {
    const BatchInfo& b = plan.batches[j];
    ASSERT_LT(b.row_begin, b.row_end);
    EXPECT_EQ(b.nnz_begin, row_ptr[b.row_begin]);
    EXPECT_EQ(b.nnz_end, row_ptr[b.row_end]);
    EXPECT_LE(b.nnz_end - b.nnz_begin, p.max_batch_size);
    EXPECT_LE(b.row_end - b.row_begin, p.max_batch_rows);
    EXPECT_EQ(b.vector_size,
              batch_vector_size(b.nnz_end - b.nnz_begin, b.row_end - b.row_begin, p));
    if (j > 0) EXPECT_GT(b.row_begin, plan.batches[j - 1].row_begin);
    for (Ordinal r = b.row_begin; r < b.row_end; ++r) ++covered[r];
    if (b.row_end < m) {
      const Ordinal next = b.row_end;
      const bool is_long = row_ptr[next + 1] - row_ptr[next] > p.max_batch_size;
      const bool overflows = row_ptr[next + 1] - b.nnz_begin > p.max_batch_size;
      const bool too_many_rows = b.row_end - b.row_begin >= p.max_batch_rows;
      EXPECT_TRUE(is_long || overflows || too_many_rows) << "batch " << j << " not greedy";
    }
  }
  for (Ordinal r = 0; r < m; ++r) EXPECT_EQ(covered[r], 1) << "row " << r;

  expect_valid_big_batches(row_ptr, p, plan);
}

TEST(BatchPlan, ReproducesPaperFigure5) {
  const auto row_ptr = row_ptr_of({32, 15, 16, 11, 8, 38, 256, 25, 16, 130, 2, 22, 33});
  BatchParams p;
  p.max_batch_size = 64;
  p.big_batches = 2;
  const BatchPlan plan = make_batch_plan(row_ptr.data(), 13, p);
  const std::vector<std::pair<Ordinal, Ordinal>> expected = {{0, 3}, {3, 6}, {7, 9}, {10, 13}};
  ASSERT_EQ(plan.batches.size(), expected.size());
  for (std::size_t j = 0; j < expected.size(); ++j) {
    EXPECT_EQ(plan.batches[j].row_begin, expected[j].first);
    EXPECT_EQ(plan.batches[j].row_end, expected[j].second);
    // Means 21, 19, 20.5, 19 non-zeros per row: Table 2 gives 2 threads per row.
    EXPECT_EQ(plan.batches[j].vector_size, 2);
  }
  EXPECT_EQ(plan.long_rows, (std::vector<Ordinal>{6, 9}));
  expect_valid_plan(row_ptr, p, plan);

  // 604 non-zeros, big batches of at most 302: batches 0-1 fill [0, 120); long row 6 ([120, 376))
  // is cut at 302; the second holds its rest, batch 2 [376, 417), long row 9 [417, 547) and batch
  // 3 up to 604, 302 non-zeros in all.
  ASSERT_EQ(plan.big_batches.size(), 2u);
  const BigBatchInfo& a = plan.big_batches[0];
  const BigBatchInfo& b = plan.big_batches[1];
  EXPECT_EQ(a.nnz_end, 302);
  EXPECT_EQ(std::make_pair(a.batch_begin, a.batch_end), std::make_pair(0, 2));
  EXPECT_EQ(std::make_pair(a.long_begin, a.long_end), std::make_pair(0, 1));
  EXPECT_EQ(std::make_pair(a.row_begin, a.row_end), std::make_pair(0, 6));
  EXPECT_EQ(std::make_pair(b.batch_begin, b.batch_end), std::make_pair(2, 4));
  EXPECT_EQ(std::make_pair(b.long_begin, b.long_end), std::make_pair(0, 2));
  EXPECT_EQ(std::make_pair(b.row_begin, b.row_end), std::make_pair(7, 13));
}

// A big-batch limit (a ring slot of 100 non-zeros and 4 rows) on the Figure 5 matrix: batches
// stay whole, long rows are cut wherever a big batch fills up.
TEST(BatchPlan, BigBatchLimitsCutAtBatchesAndInsideLongRows) {
  const auto row_ptr = row_ptr_of({32, 15, 16, 11, 8, 38, 256, 25, 16, 130, 2, 22, 33});
  BatchParams p;
  p.max_batch_size = 64;
  p.max_batch_rows = 4;
  p.big_batch_nnz = 100;
  p.big_batch_rows = 4;
  const BatchPlan plan = make_batch_plan(row_ptr.data(), 13, p);
  expect_valid_plan(row_ptr, p, plan);
  std::vector<std::pair<Offset, Offset>> ranges;
  for (const BigBatchInfo& g : plan.big_batches) ranges.emplace_back(g.nnz_begin, g.nnz_end);
  // Batch 0 is [0, 63) and batch 1 [63, 120) would overflow 100: cut at 63; batch 1 and the head
  // of long row 6 ([120, 376)) fill the second big batch to 163, and the row goes on in pieces.
  EXPECT_EQ(ranges.front(), std::make_pair(Offset(0), Offset(63)));
  EXPECT_EQ(ranges[1].first, 63);
  for (const BigBatchInfo& g : plan.big_batches) EXPECT_LE(g.nnz_end - g.nnz_begin, 100);
}

// smallest_big_batch is the least C that cut_big_batches takes as big_batch_nnz and
// big_batch_rows both: the widest batch (63 non-zeros here) under max_batch_size 64, and
// max_batch_size or max_batch_rows when larger.
TEST(BatchPlan, SmallestBigBatchIsTheLeastSizeTheCutTakes) {
  const auto row_ptr = row_ptr_of({32, 15, 16, 11, 8, 38, 256, 25, 16, 130, 2, 22, 33});
  for (const auto& [size, rows] : {std::pair{Offset(64), Ordinal(4)}, std::pair{Offset(70), 4},
                                   std::pair{Offset(64), Ordinal(90)}}) {
    BatchParams p;
    p.max_batch_size = size;
    p.max_batch_rows = rows;
    BatchPlan plan = make_batch_plan(row_ptr.data(), 13, p);
    const Offset least = smallest_big_batch(plan, p);
    EXPECT_EQ(least, std::max({Offset(63), size, Offset(rows)}));
    p.big_batch_nnz = least;
    p.big_batch_rows = static_cast<Ordinal>(least);
    cut_big_batches(row_ptr.data(), 13, p, plan);
    expect_valid_plan(row_ptr, p, plan);
    p.big_batch_nnz = least - 1;
    p.big_batch_rows = static_cast<Ordinal>(least - 1);
    EXPECT_THROW(cut_big_batches(row_ptr.data(), 13, p, plan), InvalidArgument);
  }
}

TEST(BatchPlan, VectorSizeFollowsTable2) {
  const BatchParams p;
  const std::vector<std::pair<double, int>> cases = {
      {0, 1},  {16, 1},  {16.9, 1}, {17, 2},   {33, 2},   {34, 4},   {63, 4},
      {64, 8}, {121, 8}, {122, 16}, {215, 16}, {216, 32}, {5000, 32}};
  for (const auto& [mean, size] : cases) {
    EXPECT_EQ(batch_vector_size(static_cast<Offset>(mean * 10), 10, p), size) << "mean " << mean;
  }
}

TEST(BatchPlan, EmptyRowsAreCoveredAndRowCapped) {
  BatchParams p;
  p.max_batch_rows = 1000;
  const std::vector<Offset> row_ptr(5001, 0);
  const BatchPlan plan = make_batch_plan(row_ptr.data(), 5000, p);
  EXPECT_EQ(plan.batches.size(), 5u);
  EXPECT_TRUE(plan.long_rows.empty());
  expect_valid_plan(row_ptr, p, plan);
  ASSERT_EQ(plan.big_batches.size(), 1u);
  EXPECT_EQ(plan.big_batches[0].batch_end, 5);
}

TEST(BatchPlan, EmptyMatrixHasOneEmptyBigBatch) {
  const std::vector<Offset> row_ptr = {0};
  const BatchPlan plan = make_batch_plan(row_ptr.data(), 0, BatchParams{});
  EXPECT_TRUE(plan.batches.empty());
  EXPECT_TRUE(plan.long_rows.empty());
  ASSERT_EQ(plan.big_batches.size(), 1u);
  expect_valid_plan(row_ptr, BatchParams{}, plan);
}

TEST(BatchPlan, LeadingAndTrailingEmptyRowsWithSeveralBigBatches) {
  BatchParams p;
  p.max_batch_size = 4;
  p.max_batch_rows = 2;
  p.big_batches = 3;
  const auto row_ptr = row_ptr_of({0, 0, 0, 3, 9, 0, 0, 2, 2, 0, 0, 0});
  const BatchPlan plan = make_batch_plan(row_ptr.data(), 12, p);
  EXPECT_EQ(plan.long_rows, (std::vector<Ordinal>{4}));
  expect_valid_plan(row_ptr, p, plan);
}

// Random shapes and parameters, every second trial with limits on the big batches (a small
// ring's slots).
TEST(BatchPlan, RandomRowLengthsKeepEveryInvariant) {
  std::mt19937_64 gen(2024);
  for (int trial = 0; trial < 600; ++trial) {
    const Ordinal m = static_cast<Ordinal>(gen() % 300);
    std::vector<Offset> lengths(m);
    for (auto& l : lengths) l = gen() % 5 == 0 ? Offset(gen() % 500) : Offset(gen() % 12);
    BatchParams p;
    p.max_batch_size = 1 + Offset(gen() % 100);
    p.max_batch_rows = 1 + Ordinal(gen() % 40);
    p.big_batches = 1 + int(gen() % 6);
    if (trial % 2) {
      p.big_batch_nnz = p.max_batch_size + Offset(gen() % 200);
      p.big_batch_rows = gen() % 2 ? 0 : p.max_batch_rows + Ordinal(gen() % 30);
    }
    const auto row_ptr = row_ptr_of(lengths);
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_valid_plan(row_ptr, p, make_batch_plan(row_ptr.data(), m, p));
  }
}

TEST(BatchPlan, RejectsBadParameters) {
  const std::vector<Offset> row_ptr = {0, 1};
  BatchParams p;
  p.max_batch_size = 0;
  EXPECT_THROW(make_batch_plan(row_ptr.data(), 1, p), InvalidArgument);
  p = BatchParams{};
  p.max_batch_rows = 0;
  EXPECT_THROW(make_batch_plan(row_ptr.data(), 1, p), InvalidArgument);
  p = BatchParams{};
  p.big_batches = 0;
  EXPECT_THROW(make_batch_plan(row_ptr.data(), 1, p), InvalidArgument);
  p = BatchParams{};
  p.vector_switch = {17, 34, 10, 122, 216};
  EXPECT_THROW(make_batch_plan(row_ptr.data(), 1, p), InvalidArgument);
  p = BatchParams{};
  p.big_batch_nnz = p.max_batch_size - 1;  // a batch must fit a big batch
  EXPECT_THROW(make_batch_plan(row_ptr.data(), 1, p), InvalidArgument);
  p = BatchParams{};
  p.big_batch_rows = p.max_batch_rows - 1;
  EXPECT_THROW(make_batch_plan(row_ptr.data(), 1, p), InvalidArgument);
}

TEST(BatchedCsrFormat, GroupsBatchesByVectorSize) {
  const auto a = mixed_long_rows<double>(500, 600, 3);
  for (const auto& [name, p] : batch_param_sets()) {
    SCOPED_TRACE(name);
    const BatchedCsr<double> b = make_batched_csr(a, p);
    ASSERT_EQ(b.vector_begin[6], Ordinal(b.batch_infos.extent(0)));
    std::vector<int> seen(b.batch_infos.extent(0), 0);
    for (int k = 0; k < 6; ++k)
      for (Ordinal i = b.vector_begin[k]; i < b.vector_begin[k + 1]; ++i) {
        const Ordinal j = b.batches_by_vector(i);
        EXPECT_EQ(b.batch_infos(j).vector_size, 1 << k);
        ++seen[j];
      }
    for (int s : seen) EXPECT_EQ(s, 1);
  }
}

template <class S>
class BatchedCsrHost : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BatchedCsrHost, Scalars);

TYPED_TEST(BatchedCsrHost, MatchesReferenceOnZooAndLongRows) {
  using S = TypeParam;
  std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::pair<S, S>> scalars = {{1, 0}, {S(-0.75), S(1.5)}, {0, S(2)}, {0, 0}};
  for (const auto& [name, a] : batched_matrices<S>()) {
    for (const auto& [pname, p] : batch_param_sets()) {
      SCOPED_TRACE(name + " / " + pname);
      const BatchedCsr<S> b = make_batched_csr(a, p);
      for (const auto& [alpha, beta] : scalars) {
        const auto x = random_vector<S>(a.ncols, ++seed);
        const auto y0 = beta == S(0) ? nan_vector<S>(a.nrows) : random_vector<S>(a.nrows, ++seed);
        auto y = y0, expected = y0;
        reference::spmv(alpha, a, x.data(), beta, expected.data());
        host::spmv(alpha, b, x.data(), beta, y.data());
        EXPECT_LE(spmv_error(y, expected, alpha, a, x.data(), beta, y0), reference::tolerance<S>())
            << "alpha " << alpha << " beta " << beta;
      }
    }
  }
}

}  // namespace
}  // namespace kspmv::test

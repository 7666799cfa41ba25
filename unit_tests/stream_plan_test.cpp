// The streamed ring's plan (stream_plan.hpp): each big batch read only from its own slot, with
// rebased 32-bit offsets, computes y exactly; run on the host as the GPU runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "batched_test_matrices.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/stream_plan.hpp"

namespace kspmv::test {
namespace {

// y = A x as the ring computes it: big batch g sees only the non-zeros [nnz_begin, nnz_end)
// (its slot), its rebased row pointers, batches and chunks; long rows are summed by chunk and
// finished by the big batch holding their last non-zero. Every row is written exactly once.
template <class S>
std::vector<S> ring_spmv(const CsrMatrix<S>& a, const StreamPlan& sp, Offset chunk_nnz,
                         const std::vector<S>& x) {
  std::vector<S> y(a.nrows, S(0));
  std::vector<int> writes(a.nrows, 0);
  const LongRowPlan& l = sp.long_rows;
  std::vector<double> partial(l.chunk_begin.size(), 0.0);
  for (std::size_t g = 0; g < sp.big_batches.size(); ++g) {
    const BigBatchInfo& big = sp.big_batches[g];
    SCOPED_TRACE("big batch " + std::to_string(g));
    const Offset size = big.nnz_end - big.nnz_begin;
    EXPECT_LE(size, sp.max_nnz);
    EXPECT_LE(big.row_end - big.row_begin, sp.max_rows);
    // The slot: only this big batch's entries.
    const std::vector<Ordinal> col(a.col_idx.data() + big.nnz_begin,
                                   a.col_idx.data() + big.nnz_end);
    const std::vector<S> val(a.values.data() + big.nnz_begin, a.values.data() + big.nnz_end);
    const std::int32_t* rows = sp.local_row_ptr.data() + sp.slice_begin[g];
    const Offset slice = sp.slice_begin[g + 1] - sp.slice_begin[g];
    EXPECT_EQ(slice, big.batch_begin < big.batch_end ? big.row_end - big.row_begin + 1 : 0);
    for (Ordinal j = big.batch_begin; j < big.batch_end; ++j) {
      const BatchInfo& b = sp.batches[j];
      EXPECT_GE(b.nnz_begin, 0);
      EXPECT_LE(b.nnz_end, size);
      for (Ordinal r = b.row_begin; r < b.row_end; ++r) {
        EXPECT_LT(r + 1, slice);
        if (r + 1 >= slice) return y;
        double sum = 0;
        for (Offset k = rows[r]; k < rows[r + 1]; ++k) {
          EXPECT_GE(k, 0);
          EXPECT_LT(k, size);
          sum += double(val[k]) * x[col[k]];
        }
        y[big.row_begin + r] = S(sum);
        ++writes[big.row_begin + r];
      }
    }
    for (Ordinal c = sp.chunk_begin[g]; c < sp.chunk_begin[g + 1]; ++c) {
      EXPECT_GE(l.chunk_begin[c], 0);
      EXPECT_LE(l.chunk_end[c], size);
      EXPECT_LE(l.chunk_end[c] - l.chunk_begin[c], chunk_nnz);
      EXPECT_LT(l.chunk_begin[c], l.chunk_end[c]);
      for (Offset k = l.chunk_begin[c]; k < l.chunk_end[c]; ++k)
        partial[c] += double(val[k]) * x[col[k]];
    }
    for (Ordinal i = sp.finish_begin[g]; i < sp.finish_begin[g + 1]; ++i) {
      // Its chunks were summed by this big batch or earlier ones.
      EXPECT_LE(l.first_chunk[i + 1], sp.chunk_begin[g + 1]);
      double sum = 0;
      for (Ordinal c = l.first_chunk[i]; c < l.first_chunk[i + 1]; ++c) sum += partial[c];
      y[l.rows[i]] = S(sum);
      ++writes[l.rows[i]];
    }
  }
  for (Ordinal r = 0; r < a.nrows; ++r) EXPECT_EQ(writes[r], 1) << "row " << r;
  return y;
}

template <class S>
class StreamPlanTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(StreamPlanTest, Scalars);

TYPED_TEST(StreamPlanTest, EachSlotAloneComputesEveryRow) {
  using S = TypeParam;
  for (const auto& [name, a] : batched_matrices<S>()) {
    for (const auto& [pname, p] : batch_param_sets()) {
      for (const Offset chunk : {Offset(1), Offset(7), Offset(1024)}) {
        SCOPED_TRACE(name + " / " + pname + " / chunks of " + std::to_string(chunk));
        const BatchPlan plan = make_batch_plan(a.row_ptr.data(), a.nrows, p);
        const StreamPlan sp = make_stream_plan(a.row_ptr.data(), plan, chunk);
        ASSERT_EQ(sp.slice_begin.size(), plan.big_batches.size() + 1);
        ASSERT_EQ(sp.chunk_begin.size(), plan.big_batches.size() + 1);
        ASSERT_EQ(sp.finish_begin.size(), plan.big_batches.size() + 1);
        EXPECT_EQ(sp.finish_begin.back(), Ordinal(plan.long_rows.size()));
        const auto x = random_vector<S>(a.ncols, 11);
        std::vector<S> expected(a.nrows);
        reference::spmv(S(1), a, x.data(), S(0), expected.data());
        const std::vector<S> y = ring_spmv(a, sp, chunk, x);
        EXPECT_LE(reference::rel_l2_error(y.data(), expected.data(), y.size()),
                  reference::tolerance<S>());
      }
    }
  }
}

// Many random shapes and limits: every row once, every offset inside its slot.
TEST(StreamPlan, RandomShapesAndLimits) {
  std::mt19937_64 gen(5);
  for (int trial = 0; trial < 100; ++trial) {
    const Ordinal m = 1 + static_cast<Ordinal>(gen() % 400);
    std::vector<std::tuple<Ordinal, Ordinal, double>> t;
    for (Ordinal i = 0; i < m; ++i) {
      const int len = gen() % 9 == 0 ? int(gen() % 700) : int(gen() % 12);
      for (int k = 0; k < len; ++k) t.emplace_back(i, Ordinal(gen() % 900), 1.0 + k % 3);
    }
    const auto a = from_triplets<double>(m, 900, t);
    BatchParams p;
    p.max_batch_size = 1 + Offset(gen() % 64);
    p.max_batch_rows = 1 + Ordinal(gen() % 16);
    p.big_batch_nnz = p.max_batch_size + Offset(gen() % 300);
    p.big_batch_rows = p.max_batch_rows + Ordinal(gen() % 40);
    SCOPED_TRACE("trial " + std::to_string(trial));
    const BatchPlan plan = make_batch_plan(a.row_ptr.data(), m, p);
    const Offset chunk = 1 + Offset(gen() % 100);
    const StreamPlan sp = make_stream_plan(a.row_ptr.data(), plan, chunk);
    const auto x = random_vector<double>(a.ncols, trial);
    std::vector<double> expected(a.nrows);
    reference::spmv(1.0, a, x.data(), 0.0, expected.data());
    const std::vector<double> y = ring_spmv(a, sp, chunk, x);
    EXPECT_LE(reference::rel_l2_error(y.data(), expected.data(), y.size()), 1e-12);
  }
}

TEST(StreamPlan, RejectsBadChunks) {
  const std::vector<Offset> row_ptr = {0, 1};
  const BatchPlan plan = make_batch_plan(row_ptr.data(), 1, BatchParams{});
  EXPECT_THROW(make_stream_plan(row_ptr.data(), plan, 0), InvalidArgument);
}

}  // namespace
}  // namespace kspmv::test

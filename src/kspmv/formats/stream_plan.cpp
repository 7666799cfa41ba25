#include "kspmv/formats/stream_plan.hpp"

#include <algorithm>

#include "kspmv/core/error.hpp"

namespace kspmv {

StreamPlan make_stream_plan(const Offset* row_ptr, const BatchPlan& plan, Offset chunk_nnz) {
  if (chunk_nnz < 1) throw InvalidArgument("make_stream_plan: chunk_nnz must be positive");
  StreamPlan s;
  s.big_batches = plan.big_batches;
  const auto& big = plan.big_batches;
  s.slice_begin.push_back(0);
  for (const BigBatchInfo& g : big) {
    s.max_nnz = std::max(s.max_nnz, g.nnz_end - g.nnz_begin);
    s.max_rows = std::max(s.max_rows, g.row_end - g.row_begin);
    if (g.batch_begin < g.batch_end) {
      for (Ordinal r = g.row_begin; r <= g.row_end; ++r)
        s.local_row_ptr.push_back(static_cast<std::int32_t>(row_ptr[r] - g.nnz_begin));
    }
    s.slice_begin.push_back(static_cast<Offset>(s.local_row_ptr.size()));
    for (Ordinal j = g.batch_begin; j < g.batch_end; ++j) {
      BatchInfo b = plan.batches[j];
      b.row_begin -= g.row_begin;
      b.row_end -= g.row_begin;
      b.nnz_begin -= g.nnz_begin;
      b.nnz_end -= g.nnz_begin;
      s.batches.push_back(b);
    }
  }
  // Long rows: chunks from each row's start, cut again where a big batch ends; chunks are
  // numbered in order of their non-zeros, so those of a big batch are consecutive.
  LongRowPlan& l = s.long_rows;
  l.rows = plan.long_rows;
  std::size_t g = 0;
  s.chunk_begin.push_back(0);
  s.finish_begin.push_back(0);
  for (std::size_t i = 0; i < l.rows.size(); ++i) {
    const Ordinal r = l.rows[i];
    l.first_chunk.push_back(static_cast<Ordinal>(l.chunk_begin.size()));
    for (Offset k = row_ptr[r]; k < row_ptr[r + 1];) {
      while (big[g].nnz_end <= k) {  // close the big batches before the one holding k
        s.chunk_begin.push_back(static_cast<Ordinal>(l.chunk_begin.size()));
        s.finish_begin.push_back(static_cast<Ordinal>(i));
        ++g;
      }
      const Offset end = std::min({k + chunk_nnz, row_ptr[r + 1], big[g].nnz_end});
      l.chunk_begin.push_back(k - big[g].nnz_begin);
      l.chunk_end.push_back(end - big[g].nnz_begin);
      k = end;
    }
  }
  l.first_chunk.push_back(static_cast<Ordinal>(l.chunk_begin.size()));
  while (s.chunk_begin.size() < big.size() + 1) {
    s.chunk_begin.push_back(static_cast<Ordinal>(l.chunk_begin.size()));
    s.finish_begin.push_back(static_cast<Ordinal>(l.rows.size()));
  }
  return s;
}

}  // namespace kspmv

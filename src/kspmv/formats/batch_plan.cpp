#include "kspmv/formats/batch_plan.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv {

void validate(const BatchParams& p) {
  if (p.max_batch_size < 1)
    throw InvalidArgument("max_batch_size must be >= 1 (got " + std::to_string(p.max_batch_size) +
                          ")");
  if (p.max_batch_rows < 1)
    throw InvalidArgument("max_batch_rows must be >= 1 (got " + std::to_string(p.max_batch_rows) +
                          ")");
  if (p.big_batches < 1)
    throw InvalidArgument("big_batches must be >= 1 (got " + std::to_string(p.big_batches) + ")");
  if (!std::is_sorted(p.vector_switch.begin(), p.vector_switch.end()))
    throw InvalidArgument("vector_switch must be non-decreasing");
  if (p.big_batch_nnz != 0 && p.big_batch_nnz < p.max_batch_size)
    throw InvalidArgument("big_batch_nnz must be 0 or at least max_batch_size (got " +
                          std::to_string(p.big_batch_nnz) + ")");
  if (p.big_batch_rows != 0 && p.big_batch_rows < p.max_batch_rows)
    throw InvalidArgument("big_batch_rows must be 0 or at least max_batch_rows (got " +
                          std::to_string(p.big_batch_rows) + ")");
}

int batch_vector_size(Offset nnz, Ordinal rows, const BatchParams& p) {
  const double mean = static_cast<double>(nnz) / rows;
  int size = 1;
  for (double s : p.vector_switch) size *= mean >= s ? 2 : 1;
  return size;
}

namespace {
Offset widest_batch(const BatchPlan& plan) {
  Offset widest = 1;
  for (const BatchInfo& b : plan.batches) widest = std::max(widest, b.nnz_end - b.nnz_begin);
  return widest;
}
}  // namespace

Offset smallest_big_batch(const BatchPlan& plan, const BatchParams& p) {
  return std::max({widest_batch(plan), p.max_batch_size, Offset{p.max_batch_rows}});
}

void cut_big_batches(const Offset* row_ptr, Ordinal m, const BatchParams& p, BatchPlan& plan) {
  validate(p);
  const auto& batches = plan.batches;
  const auto& long_rows = plan.long_rows;
  const Offset nnz = row_ptr[m];
  // Alg. 7's size nnz / big_batches, within the limits, never below the largest batch.
  const Offset widest = widest_batch(plan);
  Offset size = std::max((nnz + p.big_batches - 1) / p.big_batches, widest);
  if (p.big_batch_nnz > 0) size = std::min(size, p.big_batch_nnz);
  size = std::min(size, kMaxBigBatchNnz);
  if (size < widest)
    throw InvalidArgument("a batch of " + std::to_string(widest) +
                          " non-zeros exceeds the big-batch size");
  const Ordinal row_cap =
      p.big_batch_rows > 0 ? p.big_batch_rows : std::numeric_limits<Ordinal>::max();

  plan.big_batches.clear();
  const Ordinal nb = static_cast<Ordinal>(batches.size());
  const Ordinal nl = static_cast<Ordinal>(long_rows.size());
  Ordinal b = 0, l = 0;  // the next batch and long row
  BigBatchInfo g{0, 0, 0, 0, 0, 0, 0, 0};
  Offset used = 0;
  bool has_batches = false;
  auto close = [&](Offset at) {  // ends g at non-zero `at`; the next one starts there
    g.nnz_end = at;
    plan.big_batches.push_back(g);
    g = {at, at, b, b, l, l, g.row_end, g.row_end};
    used = 0;
    has_batches = false;
  };
  // Units in row order: whole batches, and long rows cut where a big batch is full.
  while (b < nb || l < nl) {
    if (l == nl || (b < nb && batches[b].row_begin < long_rows[l])) {
      const BatchInfo& u = batches[b];
      const Offset len = u.nnz_end - u.nnz_begin;
      const bool fits = used + len <= size && (!has_batches || u.row_end - g.row_begin <= row_cap);
      if (!fits && (has_batches || used > 0)) close(u.nnz_begin);
      if (!has_batches) g.row_begin = u.row_begin;
      g.row_end = u.row_end;
      has_batches = true;
      used += len;
      g.batch_end = ++b;
    } else {
      const Ordinal r = long_rows[l];
      for (Offset k = row_ptr[r]; k < row_ptr[r + 1];) {
        if (used == size) close(k);
        const Offset take = std::min(row_ptr[r + 1] - k, size - used);
        g.long_end = l + 1;
        used += take;
        k += take;
      }
      ++l;
    }
  }
  close(nnz);
}

BatchPlan make_batch_plan(const Offset* row_ptr, Ordinal m, const BatchParams& p) {
  validate(p);
  if (m < 0) throw InvalidArgument("make_batch_plan: negative row count");
  if (row_ptr == nullptr) throw InvalidArgument("make_batch_plan: null row pointer");
  BatchPlan plan;
  // Alg. 3: long rows are set aside; other rows fill the open batch in order until the next row
  // would overflow it; a long row closes the open batch.
  Ordinal start = 0;
  bool open = false;
  auto close = [&](Ordinal end) {
    const Offset nz_begin = row_ptr[start], nz_end = row_ptr[end];
    plan.batches.push_back(
        {start, end, nz_begin, nz_end, batch_vector_size(nz_end - nz_begin, end - start, p)});
    open = false;
  };
  for (Ordinal i = 0; i < m; ++i) {
    const Offset len = row_ptr[i + 1] - row_ptr[i];
    if (len > p.max_batch_size) {
      plan.long_rows.push_back(i);
      if (open) close(i);
      continue;
    }
    if (open &&
        (row_ptr[i + 1] - row_ptr[start] > p.max_batch_size || i - start >= p.max_batch_rows))
      close(i);
    if (!open) start = i, open = true;
  }
  if (open) close(m);
  cut_big_batches(row_ptr, m, p, plan);
  return plan;
}

}  // namespace kspmv

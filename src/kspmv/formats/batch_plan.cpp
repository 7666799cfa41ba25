#include "kspmv/formats/batch_plan.hpp"

#include <algorithm>
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
}

int batch_vector_size(Offset nnz, Ordinal rows, const BatchParams& p) {
  const double mean = static_cast<double>(nnz) / rows;
  int size = 1;
  for (double s : p.vector_switch) size *= mean >= s ? 2 : 1;
  return size;
}

namespace {

// Alg. 7: big batch i copies [i * size, min((i + 1) * size, nnz)) and runs the batches and long
// rows whose last non-zero it copies. Units (batches and long rows) are walked in row order.
void make_big_batches(const Offset* row_ptr, Ordinal m, int wanted, BatchPlan& plan) {
  const Offset nnz = row_ptr[m];
  const Offset size =
      nnz == 0 ? 0 : (nnz + std::min<Offset>(wanted, nnz) - 1) / std::min<Offset>(wanted, nnz);
  const int count = nnz == 0 ? 1 : static_cast<int>((nnz + size - 1) / size);
  // The big batch whose copy holds the non-zero before `end` (0 when there is none).
  auto owner = [&](Offset end) { return end == 0 ? 0 : static_cast<int>((end - 1) / size); };

  const auto& batches = plan.batches;
  const auto& long_rows = plan.long_rows;
  Ordinal b = 0, l = 0;
  for (int i = 0; i < count; ++i) {
    BigBatchInfo big{};
    big.nnz_begin = i * size;
    big.nnz_end = std::min<Offset>((i + 1) * size, nnz);
    big.batch_begin = b;
    big.long_begin = l;
    big.row_begin = i == 0 ? 0 : plan.big_batches.back().row_end;
    while (b < Ordinal(batches.size()) && owner(batches[b].nnz_end) <= i) ++b;
    while (l < Ordinal(long_rows.size()) && owner(row_ptr[long_rows[l] + 1]) <= i) ++l;
    big.batch_end = b;
    big.long_end = l;
    // Rows up to the first row of the next big batch's first unit (all rows for the last one).
    Ordinal row_end = m;
    if (b < Ordinal(batches.size())) row_end = batches[b].row_begin;
    if (l < Ordinal(long_rows.size())) row_end = std::min(row_end, long_rows[l]);
    big.row_end = row_end;
    const Offset read_begin = row_ptr[big.row_begin], read_end = row_ptr[big.row_end];
    big.wait_begin = read_begin < read_end ? static_cast<int>(read_begin / size) : i;
    plan.big_batches.push_back(big);
  }
}

}  // namespace

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
  make_big_batches(row_ptr, m, p.big_batches, plan);
  return plan;
}

}  // namespace kspmv

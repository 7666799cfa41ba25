#include "kspmv/formats/long_rows.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "kspmv/core/error.hpp"

namespace kspmv {

Offset long_row_chunk_nnz(Offset longest) {
  Offset chunk = 128;
  while (chunk < 1024 && chunk * chunk < longest) chunk *= 2;
  return chunk;
}

std::vector<Ordinal> find_long_rows(const Offset* row_ptr, Ordinal m, Offset threshold) {
  std::vector<Ordinal> rows;
  for (Ordinal i = 0; i < m; ++i)
    if (row_ptr[i + 1] - row_ptr[i] > threshold) rows.push_back(i);
  return rows;
}

LongRowPlan plan_long_rows(const Offset* row_ptr, Ordinal m, std::vector<Ordinal> rows,
                           Offset chunk_nnz) {
  std::vector<Offset> begin, end;
  for (const Ordinal r : rows) {
    if (r < 0 || r >= m) {
      throw InvalidArgument("plan_long_rows: row " + std::to_string(r) + " outside [0, " +
                            std::to_string(m) + ")");
    }
    begin.push_back(row_ptr[r]);
    end.push_back(row_ptr[r + 1]);
  }
  return plan_long_row_extents(std::move(rows), begin, end, chunk_nnz);
}

LongRowPlan plan_long_row_extents(std::vector<Ordinal> rows, const std::vector<Offset>& begin,
                                  const std::vector<Offset>& end, Offset chunk_nnz) {
  if (chunk_nnz < 1) throw InvalidArgument("plan_long_rows: chunk_nnz must be positive");
  if (begin.size() != rows.size() || end.size() != rows.size())
    throw InvalidArgument("plan_long_rows: one extent per row is needed");
  LongRowPlan p;
  p.first_chunk.reserve(rows.size() + 1);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (end[i] < begin[i]) throw InvalidArgument("plan_long_rows: a reversed row extent");
    p.first_chunk.push_back(static_cast<Ordinal>(p.chunk_begin.size()));
    for (Offset k = begin[i]; k < end[i]; k += chunk_nnz) {
      p.chunk_begin.push_back(k);
      p.chunk_end.push_back(std::min(k + chunk_nnz, end[i]));
    }
  }
  p.first_chunk.push_back(static_cast<Ordinal>(p.chunk_begin.size()));
  p.rows = std::move(rows);
  return p;
}

}  // namespace kspmv

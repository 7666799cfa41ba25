#include "kspmv/formats/long_rows.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "kspmv/core/error.hpp"

namespace kspmv {

std::vector<Ordinal> find_long_rows(const Offset* row_ptr, Ordinal m, Offset threshold) {
  std::vector<Ordinal> rows;
  for (Ordinal i = 0; i < m; ++i)
    if (row_ptr[i + 1] - row_ptr[i] > threshold) rows.push_back(i);
  return rows;
}

LongRowPlan plan_long_rows(const Offset* row_ptr, Ordinal m, std::vector<Ordinal> rows,
                           Offset chunk_nnz) {
  if (chunk_nnz < 1) throw InvalidArgument("plan_long_rows: chunk_nnz must be positive");
  LongRowPlan p;
  p.first_chunk.reserve(rows.size() + 1);
  for (const Ordinal r : rows) {
    if (r < 0 || r >= m) {
      throw InvalidArgument("plan_long_rows: row " + std::to_string(r) + " outside [0, " +
                            std::to_string(m) + ")");
    }
    p.first_chunk.push_back(static_cast<Ordinal>(p.chunk_begin.size()));
    for (Offset k = row_ptr[r]; k < row_ptr[r + 1]; k += chunk_nnz) {
      p.chunk_begin.push_back(k);
      p.chunk_end.push_back(std::min(k + chunk_nnz, row_ptr[r + 1]));
    }
  }
  p.first_chunk.push_back(static_cast<Ordinal>(p.chunk_begin.size()));
  p.rows = std::move(rows);
  return p;
}

}  // namespace kspmv

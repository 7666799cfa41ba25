// Column stripes (Reorder::Stripes): a CSR cut by columns into stripes of `width` columns, each a
// CSR over every row with the global column indices, so that y = A x is the sum of the stripes'
// products (the column blocks of HBP, paper 3 Sec. III-A, without its hashing). Kokkos-free:
// the CUDA backend builds its stripes with it (a template here: its complex type is its own).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "kspmv/core/csr_pointers.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/parallel.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

// A CSR matrix in arrays of its own.
template <class Scalar>
struct CsrArrays {
  std::vector<Offset> row_ptr;
  std::vector<Ordinal> col;
  std::vector<Scalar> val;
  Ordinal m = 0, n = 0;
  CsrPointers<Scalar> pointers() const { return {row_ptr.data(), col.data(), val.data(), m, n}; }
};

// ceil(n / width), at least one: the stripes of n columns (width >= 1).
inline Ordinal stripe_count(Ordinal n, Ordinal width) {
  return n > 0 ? (n - 1) / width + 1 : 1;
}

// The ceil(n / width) stripes of `a` (at least one; width >= 1), stripe s holding the entries of
// columns [s * width, (s + 1) * width) in their order within each row (no values where a.val is
// null: the pattern alone). `sources`, when given, receives for every entry of the stripes,
// stripe 0's first, its position in `a` (Index: Ordinal where a has fewer than 2^31 entries).
template <class Scalar, class Index = Offset>
std::vector<CsrArrays<Scalar>> column_stripes(const CsrPointers<Scalar>& a, Ordinal width,
                                              std::vector<Index>* sources = nullptr) {
  if (width < 1)
    throw InvalidArgument("column_stripes: a stripe needs at least one column (width " +
                          std::to_string(width) + ")");
  const Ordinal count = stripe_count(a.n, width);
  const std::size_t m = static_cast<std::size_t>(std::max<Ordinal>(a.m, 0));
  std::vector<CsrArrays<Scalar>> s(static_cast<std::size_t>(count));
  for (auto& b : s) {
    b.m = a.m, b.n = a.n;
    b.row_ptr.assign(m + 1, 0);
  }
  constexpr std::int64_t kGrain = 1 << 14;  // rows a block
  // Each row's entries per stripe, then each stripe's row pointer, then the entries.
  parallel_blocks(std::int64_t(m), kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      for (Offset p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) ++s[a.col[p] / width].row_ptr[i + 1];
  });
  for (auto& b : s) {
    for (std::size_t i = 0; i < m; ++i) b.row_ptr[i + 1] += b.row_ptr[i];
    b.col.resize(static_cast<std::size_t>(b.row_ptr[m]));
    if (a.val) b.val.resize(b.col.size());
  }
  std::vector<Offset> first(s.size(), 0);  // where each stripe's entries start in `sources`
  for (std::size_t t = 1; t < s.size(); ++t) first[t] = first[t - 1] + s[t - 1].row_ptr[m];
  if (sources) sources->resize(static_cast<std::size_t>(a.nnz()));
  parallel_blocks(std::int64_t(m), kGrain, [&](std::int64_t begin, std::int64_t end) {
    std::vector<Offset> next(s.size());
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::size_t t = 0; t < s.size(); ++t) next[t] = s[t].row_ptr[i];
      for (Offset p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        const std::size_t t = static_cast<std::size_t>(a.col[p] / width);
        const Offset q = next[t]++;
        s[t].col[q] = a.col[p];
        if (a.val) s[t].val[q] = a.val[p];
        if (sources) (*sources)[first[t] + q] = static_cast<Index>(p);
      }
    }
  });
  return s;
}

}  // namespace kspmv

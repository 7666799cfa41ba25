// The device's CSR kernel of space_spmv.hpp (a team of vectors per block of rows, the rows longer
// than kLongRow summed in chunks by a second kernel that adds atomically into y) run on the host
// execution space, where CI runs it, against the long-double oracle: generated matrices with long
// rows, rows of every length around the split, the edge-case zoo.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/kokkos/spmv.hpp"
#include "kspmv/gen/generators.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

using Exec = HostExecSpace;
using host::kChunk;
using host::kLongRow;

// Rows of length 0, kLongRow (not split), kLongRow + 1, kChunk, kChunk + 1, 2 kChunk and 10^5
// among short and empty ones; row i's entries in columns (i + j) mod n.
template <class S>
CsrMatrix<S> split_edges_matrix() {
  const Ordinal n = 100000;
  const std::vector<Offset> lengths = {
      0, 3, kLongRow, 0, kLongRow + 1, 7,          1, kChunk, kChunk + 1, 2 * kChunk,
      0, n, 2,        0, kLongRow - 1, kChunk - 1, 0};
  const auto m = static_cast<Ordinal>(lengths.size());
  Offset nnz = 0;
  for (const Offset length : lengths) nnz += length;
  CsrMatrix<S> a(m, n, nnz);
  const auto v = random_vector<S>(std::size_t(nnz), 11);
  a.row_ptr(0) = 0;
  for (Ordinal i = 0; i < m; ++i) {
    a.row_ptr(i + 1) = a.row_ptr(i) + lengths[i];
    for (Offset j = 0; j < lengths[i]; ++j) {
      const Offset k = a.row_ptr(i) + j;
      a.col_idx(k) = static_cast<Ordinal>((i + j) % n);
      a.values(k) = v[k];
    }
  }
  return a;
}

template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices_with_long_rows() {
  std::vector<std::pair<std::string, CsrMatrix<S>>> z;
  z.emplace_back("split_edges", split_edges_matrix<S>());
  z.emplace_back("fullchip:rows=20000", gen::from_spec<S>("fullchip:rows=20000"));
  z.emplace_back("kron:scale=12", gen::from_spec<S>("kron:scale=12"));
  return z;
}

template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices() {
  auto z = zoo<S>();
  for (auto& named : matrices_with_long_rows<S>()) z.push_back(std::move(named));
  return z;
}

Offset longest_row(const CsrMatrix<double>& a) {
  Offset most = 0;
  for (Ordinal i = 0; i < a.nrows; ++i) most = std::max(most, a.row_ptr(i + 1) - a.row_ptr(i));
  return most;
}

// A fresh seed every run; the trace names it so that a failure can be replayed.
std::uint64_t fresh_seed() {
  static std::random_device device;
  return (std::uint64_t(device()) << 32) | device();
}

TEST(SpaceCsrTeam, ChunksCoverEachLongRowOnceInOrder) {
  for (const auto& [name, a] : matrices<double>()) {
    SCOPED_TRACE(name);
    const auto chunks = host::plan_row_chunks(Exec(), host::arrays_of<Exec>(a));
    std::vector<std::pair<Ordinal, Offset>> expected, planned;
    for (Ordinal i = 0; i < a.nrows; ++i)
      if (a.row_ptr(i + 1) - a.row_ptr(i) > kLongRow)
        for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); k += kChunk)
          expected.emplace_back(i, k);
    ASSERT_EQ(chunks.row.extent(0), static_cast<std::size_t>(chunks.count));
    ASSERT_EQ(chunks.first.extent(0), static_cast<std::size_t>(chunks.count));
    for (Offset c = 0; c < chunks.count; ++c) planned.emplace_back(chunks.row(c), chunks.first(c));
    EXPECT_EQ(planned, expected);
  }
  for (const auto& [name, a] : matrices_with_long_rows<double>()) {
    EXPECT_GT(longest_row(a), kLongRow) << name;  // so the chunk kernel runs on each
    EXPECT_GT(host::plan_row_chunks(Exec(), host::arrays_of<Exec>(a)).count, 0) << name;
  }
}

template <class S>
class SpaceCsrTeamSpmv : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SpaceCsrTeamSpmv, Scalars);

// y = alpha*A*x + beta*y0 by the team kernel with the plan, and without it (no row split), for
// alpha and beta zero and not; y0 NaN when beta == 0.
TYPED_TEST(SpaceCsrTeamSpmv, MatchesTheReferenceWithAndWithoutChunks) {
  using S = TypeParam;
  const std::pair<S, S> scalars[] = {
      {S(1.5), S(0)}, {S(-0.75), S(0.5)}, {S(0), S(0)}, {S(0), S(2)}, {S(1), S(1)}};
  for (const auto& [name, a] : matrices<S>()) {
    const auto arrays = host::arrays_of<Exec>(a);
    const auto planned = host::plan_row_chunks(Exec(), arrays);
    for (const bool split : {true, false}) {
      const host::RowChunks<Exec> chunks = split ? planned : host::RowChunks<Exec>();
      for (const auto& [alpha, beta] : scalars) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(name + (split ? " split" : " whole") + ", alpha " + std::to_string(alpha) +
                     ", beta " + std::to_string(beta) + ", x seed " + std::to_string(seed));
        const auto x = random_vector<S>(a.ncols, seed);
        const auto y0 = beta == S(0) ? nan_vector<S>(a.nrows) : random_vector<S>(a.nrows, seed + 1);
        auto y = y0, ref = y0;
        host::spmv<Exec, S, true>(Exec(), alpha, arrays, x.data(), beta, y.data(), chunks);
        Exec().fence();
        reference::spmv(alpha, a, x.data(), beta, ref.data());
        EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), beta, y0), reference::tolerance<S>());
      }
    }
  }
}

}  // namespace
}  // namespace kspmv::test

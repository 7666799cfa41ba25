// Matrices and checks shared by the value refresh tests (host formats and CUDA kernels): build,
// apply, refresh with new values of the same pattern, apply again against the oracle.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "seg_test_cases.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test::refresh {

// m x n with rows in no column order and repeated columns (not merged): what a CSR may hold.
template <class S>
CsrMatrix<S> unsorted_with_duplicates(Ordinal m, Ordinal n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<Ordinal> col(0, n - 1);
  std::uniform_int_distribution<int> len(0, 12);
  std::vector<std::vector<Ordinal>> rows(m);
  Offset nnz = 0;
  for (auto& r : rows) {
    for (int k = len(gen); k > 0; --k) r.push_back(col(gen));
    if (!r.empty()) r.push_back(r.front());  // a duplicate
    nnz += static_cast<Offset>(r.size());
  }
  CsrMatrix<S> a(m, n, nnz);
  const auto v = random_vector<S>(nnz, seed + 1);
  Offset k = 0;
  for (Ordinal i = 0; i < m; ++i) {
    for (Ordinal j : rows[i]) a.col_idx(k) = j, a.values(k) = v[k], ++k;
    a.row_ptr(i + 1) = k;
  }
  return a;
}

// The matrices of every refresh test: the zoo, a 10^5-entry row among short ones (many GPU
// tiles crossed by one row), and unsorted rows with duplicates.
template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> refresh_matrices() {
  auto z = seg::matrices<S>();
  z.emplace_back("unsorted_with_duplicates", unsorted_with_duplicates<S>(700, 900, 5));
  return z;
}

// The same pattern (shared row_ptr and col_idx) with new values.
template <class S>
CsrMatrix<S> with_values(const CsrMatrix<S>& a, const std::vector<S>& v) {
  CsrMatrix<S> b = a;
  b.values = make_host_view<S>("refresh_test::values", v.size());
  std::copy(v.begin(), v.end(), b.values.data());
  return b;
}

// y = alpha*A*x + beta*y through the kernel under test (A: the values it holds now).
template <class S>
using Apply = std::function<void(S, const S*, S, S*)>;

// (alpha, beta) cases against the oracle on `a`, the matrix the kernel should hold now: beta 0
// on a NaN-poisoned y, beta != 0 on a random y.
template <class S>
void expect_matches(const Apply<S>& apply, const CsrMatrix<S>& a, std::uint64_t& seed,
                    const std::string& when) {
  for (const auto& [alpha, beta] : std::vector<std::pair<S, S>>{{S(1.5), S(0)}, {S(-0.75), S(2)}}) {
    const auto x = random_vector<S>(a.ncols, ++seed);
    const auto y0 = beta == S(0) ? nan_vector<S>(a.nrows) : random_vector<S>(a.nrows, ++seed);
    auto y = y0, ref = y0;
    reference::spmv(alpha, a, x.data(), beta, ref.data());
    apply(alpha, x.data(), beta, y.data());
    EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), beta, y0), reference::tolerance<S>())
        << when << " alpha " << alpha << " beta " << beta;
  }
}

// alpha == 0 after a refresh to NaN values: y = beta*y, A unread.
template <class S>
void expect_alpha_zero_ignores(const Apply<S>& apply, const CsrMatrix<S>& nan_matrix,
                               std::uint64_t& seed) {
  for (const S beta : {S(0), S(0.5)}) {
    const auto x = random_vector<S>(nan_matrix.ncols, ++seed);
    const auto y0 =
        beta == S(0) ? nan_vector<S>(nan_matrix.nrows) : random_vector<S>(nan_matrix.nrows, ++seed);
    auto y = y0, ref = y0;
    reference::spmv(S(0), nan_matrix, x.data(), beta, ref.data());
    apply(S(0), x.data(), beta, y.data());
    EXPECT_LE(spmv_error(y, ref, S(0), nan_matrix, x.data(), beta, y0), reference::tolerance<S>())
        << "alpha 0 after a refresh to NaN, beta " << beta;
  }
}

}  // namespace kspmv::test::refresh

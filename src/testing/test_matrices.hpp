// Matrices and vectors the tests share: the edge-case zoo, random vectors, NaN poisoning, and
// the error measure of an SpMV result.
// Built in code (never read from files) so that tests run on a bare clone.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kspmv/core/csr_pointers.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/gen/generators.hpp"
#include "testing/reference.hpp"

namespace kspmv::test {

// The host pointers of a CSR matrix, as the Kokkos-free format and CUDA code take them.
template <class S>
CsrPointers<S> pointers(const CsrMatrix<S>& a) {
  return {a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
}

// Builds a CSR from triplets (any order, duplicates summed).
template <class Scalar>
CsrMatrix<Scalar> from_triplets(Ordinal m, Ordinal n,
                                const std::vector<std::tuple<Ordinal, Ordinal, double>>& t) {
  CooMatrix<Scalar> c(m, n, static_cast<Offset>(t.size()));
  for (std::size_t k = 0; k < t.size(); ++k) {
    c.row_idx(k) = std::get<0>(t[k]);
    c.col_idx(k) = std::get<1>(t[k]);
    c.values(k) = static_cast<Scalar>(std::get<2>(t[k]));
  }
  return to_csr(c);
}

// Random values in [-1, 1) (both parts of complex values; never all zero), deterministic per
// seed.
template <class Scalar>
std::vector<Scalar> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Scalar> v(n);
  for (auto& e : v) {
    if constexpr (is_complex_v<Scalar>) {
      const double re = dist(gen);
      e = Scalar(re, dist(gen));
    } else {
      e = static_cast<Scalar>(dist(gen));
    }
  }
  return v;
}

template <class Scalar>
std::vector<Scalar> nan_vector(std::size_t n) {
  const auto nan = std::numeric_limits<real_t<Scalar>>::quiet_NaN();
  if constexpr (is_complex_v<Scalar>)
    return std::vector<Scalar>(n, Scalar(nan, nan));
  else
    return std::vector<Scalar>(n, nan);
}

// ||b - A x|| / ||b|| with the reference SpMV: a solver's result checked without its bookkeeping.
template <class S>
double true_relative_residual(const CsrMatrix<S>& a, const std::vector<S>& b,
                              const std::vector<S>& x) {
  std::vector<S> r = b;
  reference::spmv(S(-1), a, x.data(), S(1), r.data());
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    rr += double(r[i]) * r[i];
    bb += double(b[i]) * b[i];
  }
  return std::sqrt(rr / bb);
}

// D A D for a square `a`, D = diag(10^u) with u uniform in [-decades / 2, decades / 2]
// (deterministic per seed): symmetric positive definite when `a` is, and badly scaled, which the
// Jacobi preconditioner undoes.
template <class Scalar>
CsrMatrix<Scalar> badly_scaled(const CsrMatrix<Scalar>& a, double decades, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-decades / 2, decades / 2);
  std::vector<double> d(a.nrows);
  for (auto& e : d) e = std::pow(10.0, dist(gen));
  CsrMatrix<Scalar> s = clone(a);
  for (Ordinal i = 0; i < s.nrows; ++i)
    for (Offset k = s.row_ptr(i); k < s.row_ptr(i + 1); ++k)
      s.values(k) = static_cast<Scalar>(d[i] * double(s.values(k)) * d[s.col_idx(k)]);
  return s;
}

// A random m x n matrix with about `per_row` entries per row (unsorted, with duplicates).
template <class Scalar>
CsrMatrix<Scalar> random_matrix(Ordinal m, Ordinal n, int per_row, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<std::tuple<Ordinal, Ordinal, double>> t;
  if (n > 0) {
    std::uniform_int_distribution<Ordinal> col(0, n - 1);
    std::uniform_int_distribution<int> len(0, 2 * per_row);
    std::uniform_real_distribution<double> val(-1.0, 1.0);
    for (Ordinal i = 0; i < m; ++i)
      for (int k = len(gen); k > 0; --k) t.emplace_back(i, col(gen), val(gen));
  }
  return from_triplets<Scalar>(m, n, t);
}

// The error of a kernel's y = alpha*A*x + beta*y0 against the oracle's ref, relative to the size
// of the terms (reference::rel_error): cancellation in the sum cannot inflate it. y0 is the y the
// kernel started from (unread, and may be empty, when beta == 0).
template <class Scalar>
double spmv_error(const std::vector<Scalar>& y, const std::vector<Scalar>& ref, Scalar alpha,
                  const CsrMatrix<Scalar>& a, const Scalar* x, Scalar beta,
                  const std::vector<Scalar>& y0) {
  if (y.size() != std::size_t(a.nrows) || ref.size() != y.size() ||
      (beta != Scalar(0) && y0.size() != y.size()))
    return std::numeric_limits<double>::infinity();
  std::vector<Scalar> magnitude(y.size());
  reference::spmv_magnitude(alpha, a, x, beta, beta != Scalar(0) ? y0.data() : nullptr,
                            magnitude.data());
  return reference::rel_error(y.data(), ref.data(), magnitude.data(), y.size());
}

// The edge-case zoo: every shape a kernel must survive.
template <class Scalar>
std::vector<std::pair<std::string, CsrMatrix<Scalar>>> zoo() {
  using T = std::vector<std::tuple<Ordinal, Ordinal, double>>;
  std::vector<std::pair<std::string, CsrMatrix<Scalar>>> z;
  z.emplace_back("empty_0x0", from_triplets<Scalar>(0, 0, {}));
  z.emplace_back("one_by_one", from_triplets<Scalar>(1, 1, T{{0, 0, 2.5}}));
  z.emplace_back("no_rows_0x5", from_triplets<Scalar>(0, 5, {}));
  z.emplace_back("all_empty_rows_5x7", from_triplets<Scalar>(5, 7, {}));
  z.emplace_back("some_empty_rows",
                 from_triplets<Scalar>(6, 6, T{{0, 1, 1}, {2, 2, -2}, {2, 5, 3}, {5, 0, 4}}));
  z.emplace_back("rectangular_wide", random_matrix<Scalar>(17, 301, 9, 1));
  z.emplace_back("rectangular_tall", random_matrix<Scalar>(301, 17, 3, 2));
  {
    T t;  // one dense row among short ones
    for (Ordinal j = 0; j < 3000; ++j) t.emplace_back(7, j, 0.5 + j % 7);
    for (Ordinal i = 0; i < 200; ++i) t.emplace_back(i, (i * 37) % 3000, 1.0 - i % 3);
    z.emplace_back("one_dense_row", from_triplets<Scalar>(200, 3000, t));
  }
  {
    T t;  // one dense column
    for (Ordinal i = 0; i < 2000; ++i) t.emplace_back(i, 3, 1.0 + i % 5);
    for (Ordinal i = 0; i < 2000; i += 3) t.emplace_back(i, i % 50, -1.0);
    z.emplace_back("one_dense_column", from_triplets<Scalar>(2000, 50, t));
  }
  z.emplace_back("duplicates_summed",
                 from_triplets<Scalar>(3, 3, T{{1, 1, 1}, {1, 1, 2}, {0, 2, 1}, {1, 1, -0.5}}));
  z.emplace_back(
      "unsorted_input",
      from_triplets<Scalar>(4, 4, T{{3, 0, 1}, {0, 3, 2}, {2, 1, 3}, {0, 0, 4}, {3, 3, 5}}));
  z.emplace_back("random_1000", random_matrix<Scalar>(1000, 1000, 12, 3));
  z.emplace_back("power_law_rmat", gen::kronecker<Scalar>(9, 8, 4));
  return z;
}

}  // namespace kspmv::test

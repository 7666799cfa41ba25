// Matrices and SpMV cases shared by the segSpMV tests (host twin and CUDA kernels).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kspmv/formats/seg_plan.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test::seg {

// 3000 x 100000: short rows (0..6 entries, some empty) around row 1500, which holds 10^5
// entries: at small segment lengths its segments cross many GPU tiles.
template <class S>
CsrMatrix<S> long_row_among_short() {
  const Ordinal m = 3000, n = 100000;
  std::mt19937_64 gen(17);
  std::uniform_int_distribution<Ordinal> col(0, n - 1), len(0, 6);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<std::tuple<Ordinal, Ordinal, double>> t;
  for (Ordinal i = 0; i < m; ++i) {
    if (i == 1500) {
      for (Ordinal j = 0; j < n; ++j) t.emplace_back(i, j, val(gen));
    } else {
      for (Ordinal k = len(gen); k > 0; --k) t.emplace_back(i, col(gen), val(gen));
    }
  }
  return from_triplets<S>(m, n, t);
}

template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices() {
  auto z = zoo<S>();
  z.emplace_back("long_row_1e5_among_short", long_row_among_short<S>());
  return z;
}

// Segment lengths every kernel test covers: the automatic one, 1 (a segment per entry: most
// tiles crossed), 4 and the longest.
inline std::vector<int> seg_lengths() {
  return {0, 1, 4, kMaxSegLength};
}

// y = alpha*A*x + beta*y for a CSR input, in whatever form the kernel under test needs.
template <class S>
using Runner = std::function<void(S, const CsrMatrix<S>&, const S*, S, S*)>;

inline std::uint64_t fresh_seed() {
  static std::random_device device;
  return (std::uint64_t(device()) << 32) | device();
}

// Runs the cases of every kernel test on `a`: beta 0 on a NaN-poisoned y, beta != 0 on a random
// y, and alpha 0 on a matrix whose values are NaN (the kernel must not read them).
template <class S>
void expect_all_cases_match_reference(const Runner<S>& run, const CsrMatrix<S>& a) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("x seed " + std::to_string(seed));
  const auto x = random_vector<S>(a.ncols, seed);
  CsrMatrix<S> poisoned = clone(a);
  Kokkos::deep_copy(poisoned.values, std::numeric_limits<S>::quiet_NaN());
  const std::vector<std::tuple<const CsrMatrix<S>*, S, S, std::vector<S>>> cases = {
      {&a, S(1.5), S(0), nan_vector<S>(a.nrows)},
      {&a, S(-0.75), S(0.5), random_vector<S>(a.nrows, seed + 1)},
      {&poisoned, S(0), S(2), random_vector<S>(a.nrows, seed + 2)},
      {&poisoned, S(0), S(0), nan_vector<S>(a.nrows)},
  };
  for (const auto& [matrix, alpha, beta, y0] : cases) {
    SCOPED_TRACE("alpha " + std::to_string(alpha) + " beta " + std::to_string(beta));
    auto ref = y0, y = y0;
    reference::spmv(alpha, *matrix, x.data(), beta, ref.data());
    run(alpha, *matrix, x.data(), beta, y.data());
    EXPECT_LE(spmv_error(y, ref, alpha, *matrix, x.data(), beta, y0), reference::tolerance<S>());
  }
}

}  // namespace kspmv::test::seg

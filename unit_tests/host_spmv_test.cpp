// Every host kernel (free functions and through kspmv::Operator) against the long-double oracle.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/kokkos/spmv.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

// Auto and every host kernel of the registry.
std::vector<Kernel> host_operator_kernels() {
  std::vector<Kernel> kernels = {Kernel::Auto};
  for (const KernelInfo& row : kernels_of(Backend::Host)) kernels.push_back(row.kernel);
  return kernels;
}

// A kernel under test: y = alpha*A*x + beta*y for a CSR input (converted as the kernel needs).
template <class S>
using Runner = std::function<void(S, const CsrMatrix<S>&, const S*, S, S*)>;

template <class S>
std::vector<std::pair<std::string, Runner<S>>> host_kernels() {
  std::vector<std::pair<std::string, Runner<S>>> k;
  k.emplace_back("csr", [](S al, const CsrMatrix<S>& a, const S* x, S be, S* y) {
    host::spmv(al, a, x, be, y);
  });
  k.emplace_back("coo", [](S al, const CsrMatrix<S>& a, const S* x, S be, S* y) {
    host::spmv(al, to_coo(a), x, be, y);
  });
  k.emplace_back("csc", [](S al, const CsrMatrix<S>& a, const S* x, S be, S* y) {
    host::spmv(al, to_csc(a), x, be, y);
  });
  for (const Kernel kernel : host_operator_kernels()) {
    k.emplace_back(std::string("operator_") + to_string(kernel),
                   [kernel](S al, const CsrMatrix<S>& a, const S* x, S be, S* y) {
                     Options options;
                     options.kernel = kernel;
                     Operator<S> op(a, options);
                     op.apply(al, x, be, y);
                   });
  }
  return k;
}

// 4 x 100000: an empty row, a row of 10^5 entries, and two short rows.
template <class S>
CsrMatrix<S> long_row_matrix() {
  const Ordinal n = 100000;
  CsrMatrix<S> a(4, n, Offset(n) + 4);
  const Offset row_ptr[] = {0, 0, n, n + 3, n + 4};
  for (int i = 0; i < 5; ++i) a.row_ptr(i) = row_ptr[i];
  const auto v = random_vector<S>(std::size_t(n) + 4, 11);
  for (Offset k = 0; k < a.nnz(); ++k) a.values(k) = v[k];
  for (Ordinal j = 0; j < n; ++j) a.col_idx(j) = j;
  a.col_idx(n) = 0, a.col_idx(n + 1) = 5, a.col_idx(n + 2) = n - 1, a.col_idx(n + 3) = 42;
  return a;
}

template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices() {
  auto z = zoo<S>();
  z.emplace_back("long_row_1e5", long_row_matrix<S>());
  return z;
}

// A fresh seed every run; the trace names it so that a failure can be replayed.
std::uint64_t fresh_seed() {
  static std::random_device device;
  return (std::uint64_t(device()) << 32) | device();
}

// Runs `run` on y0 and compares with the oracle; x is fresh random.
template <class S>
void expect_matches_reference(const Runner<S>& run, const CsrMatrix<S>& a, S alpha, S beta,
                              const std::vector<S>& y0) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("x seed " + std::to_string(seed));
  const auto x = random_vector<S>(a.ncols, seed);
  auto ref = y0, y = y0;
  reference::spmv(alpha, a, x.data(), beta, ref.data());
  run(alpha, a, x.data(), beta, y.data());
  EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), beta, y0), reference::tolerance<S>());
}

template <class S>
class HostSpmv : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(HostSpmv, Scalars);

TYPED_TEST(HostSpmv, BetaZeroOverwritesNanOutputOnEveryMatrix) {
  using S = TypeParam;
  for (const auto& [kname, run] : host_kernels<S>()) {
    for (const auto& [name, a] : matrices<S>()) {
      SCOPED_TRACE(kname + " on " + name);
      expect_matches_reference<S>(run, a, S(1.5), S(0), nan_vector<S>(a.nrows));
    }
  }
}

TYPED_TEST(HostSpmv, NonzeroBetaAccumulatesIntoRandomOutput) {
  using S = TypeParam;
  for (const auto& [kname, run] : host_kernels<S>()) {
    for (const auto& [name, a] : matrices<S>()) {
      SCOPED_TRACE(kname + " on " + name);
      expect_matches_reference<S>(run, a, S(-0.75), S(0.5), random_vector<S>(a.nrows, 7));
    }
  }
}

TYPED_TEST(HostSpmv, AlphaZeroDoesNotReadTheMatrix) {
  using S = TypeParam;
  for (const auto& [kname, run] : host_kernels<S>()) {
    for (const auto& [name, a] : matrices<S>()) {
      SCOPED_TRACE(kname + " on " + name);
      CsrMatrix<S> poisoned = clone(a);
      Kokkos::deep_copy(poisoned.values, std::numeric_limits<S>::quiet_NaN());
      expect_matches_reference<S>(run, poisoned, S(0), S(2), random_vector<S>(a.nrows, 5));
      expect_matches_reference<S>(run, poisoned, S(0), S(0), nan_vector<S>(a.nrows));
    }
  }
}

TYPED_TEST(HostSpmv, OperatorApplyRejectsWrongExtentsAndLeavesYUnchanged) {
  using S = TypeParam;
  const auto a = random_matrix<S>(30, 20, 4, 4);
  Operator<S> op(a);
  HostView<S> x("x", 20), y("y", 30), x_bad("x_bad", 21), y_bad("y_bad", 29);
  Kokkos::deep_copy(x, S(1));
  Kokkos::deep_copy(y, S(7));
  Kokkos::deep_copy(y_bad, S(7));
  EXPECT_THROW(op.apply(S(1), x_bad, S(0), y), InvalidArgument);
  EXPECT_THROW(op.apply(S(1), x, S(0), y_bad), InvalidArgument);
  for (std::size_t i = 0; i < y.extent(0); ++i) EXPECT_EQ(y(i), S(7));
  for (std::size_t i = 0; i < y_bad.extent(0); ++i) EXPECT_EQ(y_bad(i), S(7));
}

TEST(HostCsrVectorLength, IsAPowerOfTwoGrowingWithRowLength) {
  int previous = 1;
  for (double mean : {0.0, 1.0, 5.0, 12.0, 50.0, 200.0, 1e6}) {
    const int length = host::csr_vector_length<HostExecSpace>(mean);
    EXPECT_GE(length, previous) << mean;
    EXPECT_EQ(length & (length - 1), 0) << mean;
    EXPECT_LE(length, Kokkos::TeamPolicy<HostExecSpace>::vector_length_max());
    previous = length;
  }
  EXPECT_EQ(host::csr_vector_length<HostExecSpace>(1.0), 1);
}

}  // namespace
}  // namespace kspmv::test

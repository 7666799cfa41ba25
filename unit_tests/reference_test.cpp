// The oracle itself: a hand-computed example, cuSPARSE's beta/alpha semantics, the error measure.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backends/host/reference.hpp"
#include "test_matrices.hpp"

namespace kspmv::test {
namespace {

// [[1 0 2]
//  [0 0 0]
//  [3 4 5]]
template <class S>
CsrMatrix<S> three_by_three() {
  return from_triplets<S>(3, 3, {{0, 0, 1}, {0, 2, 2}, {2, 0, 3}, {2, 1, 4}, {2, 2, 5}});
}

template <class S>
class Reference : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Reference, Scalars);

TYPED_TEST(Reference, MatchesAHandComputedProduct) {
  using S = TypeParam;
  const auto a = three_by_three<S>();
  const std::vector<S> x = {1, 2, 3};
  std::vector<S> y = {10, 20, 30};
  // A*x = {7, 0, 26}; y = 2*A*x + 0.5*y = {19, 10, 67}.
  reference::spmv(S(2), a, x.data(), S(0.5), y.data());
  EXPECT_EQ(y, (std::vector<S>{19, 10, 67}));
}

TYPED_TEST(Reference, BetaZeroOverwritesNan) {
  using S = TypeParam;
  const auto a = three_by_three<S>();
  const std::vector<S> x = {1, 2, 3};
  auto y = nan_vector<S>(3);
  reference::spmv(S(1), a, x.data(), S(0), y.data());
  EXPECT_EQ(y, (std::vector<S>{7, 0, 26}));
}

TYPED_TEST(Reference, AlphaZeroScalesYWithoutReadingA) {
  using S = TypeParam;
  auto a = three_by_three<S>();
  Kokkos::deep_copy(a.values, std::numeric_limits<S>::quiet_NaN());
  const std::vector<S> x = {1, 2, 3};
  std::vector<S> y = {1, -2, 4};
  reference::spmv(S(0), a, x.data(), S(3), y.data());
  EXPECT_EQ(y, (std::vector<S>{3, -6, 12}));
}

TYPED_TEST(Reference, RelativeErrorIsInfiniteForNanAndRelativeOtherwise) {
  using S = TypeParam;
  const std::vector<S> ref = {3, 4}, near = {3, 4.5};
  EXPECT_EQ(reference::rel_l2_error(ref.data(), ref.data(), 2), 0.0);
  EXPECT_NEAR(reference::rel_l2_error(near.data(), ref.data(), 2), 0.1, 1e-12);
  const std::vector<S> with_nan = {3, std::numeric_limits<S>::quiet_NaN()};
  EXPECT_TRUE(std::isinf(reference::rel_l2_error(with_nan.data(), ref.data(), 2)));
  const std::vector<S> zero = {0, 0}, small = {0, 1e-3f};
  EXPECT_NEAR(reference::rel_l2_error(small.data(), zero.data(), 2), 1e-3, 1e-9);
}

}  // namespace
}  // namespace kspmv::test

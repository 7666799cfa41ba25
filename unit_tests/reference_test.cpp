// The oracle itself: a hand-computed example, cuSPARSE's beta/alpha semantics, the error measures.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

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

// A matrix with NaN or infinite values (kspmv spmv --allow-nonfinite): the positions where the
// reference is not finite are compared one by one, the others as before.
TYPED_TEST(Reference, RelativeErrorComparesNonFiniteEntriesPositionByPosition) {
  using S = TypeParam;
  const S nan = std::numeric_limits<S>::quiet_NaN(), inf = std::numeric_limits<S>::infinity();
  const std::vector<S> ref = {3, nan, inf, -inf, 4};
  EXPECT_EQ(reference::rel_l2_error(ref.data(), ref.data(), 5), 0.0);
  const std::vector<S> near = {3, nan, inf, -inf, 4.5};
  EXPECT_NEAR(reference::rel_l2_error(near.data(), ref.data(), 5), 0.1, 1e-12);
  EXPECT_NEAR(reference::rel_error(near.data(), ref.data(), ref.data(), 5), 0.1, 1e-12);
  for (const std::vector<S>& wrong :
       {std::vector<S>{3, 0, inf, -inf, 4}, std::vector<S>{3, nan, -inf, -inf, 4},
        std::vector<S>{3, nan, nan, -inf, 4}, std::vector<S>{3, inf, inf, -inf, 4}}) {
    EXPECT_TRUE(std::isinf(reference::rel_l2_error(wrong.data(), ref.data(), 5)));
    EXPECT_TRUE(std::isinf(reference::rel_error(wrong.data(), ref.data(), ref.data(), 5)));
  }
}

TYPED_TEST(Reference, MagnitudeSumsTheAbsoluteTerms) {
  using S = TypeParam;
  const auto a = three_by_three<S>();
  const std::vector<S> x = {1, -2, 3}, y0 = {10, -20, 30};
  // |A|*|x| = {7, 0, 26}; 2*{7, 0, 26} + 0.5*{10, 20, 30} = {19, 10, 67}.
  std::vector<S> out(3);
  reference::spmv_magnitude(S(-2), a, x.data(), S(-0.5), y0.data(), out.data());
  EXPECT_EQ(out, (std::vector<S>{19, 10, 67}));
  const auto nan_y0 = nan_vector<S>(3);
  reference::spmv_magnitude(S(-2), a, x.data(), S(0), nan_y0.data(), out.data());
  EXPECT_EQ(out, (std::vector<S>{14, 0, 52}));
  reference::spmv_magnitude(S(-2), a, x.data(), S(0), static_cast<const S*>(nullptr), out.data());
  EXPECT_EQ(out, (std::vector<S>{14, 0, 52}));
  auto nan_a = three_by_three<S>();
  Kokkos::deep_copy(nan_a.values, std::numeric_limits<S>::quiet_NaN());
  reference::spmv_magnitude(S(0), nan_a, x.data(), S(-0.5), y0.data(), out.data());
  EXPECT_EQ(out, (std::vector<S>{5, 10, 15}));
  reference::spmv_magnitude(S(0), nan_a, x.data(), S(0), nan_y0.data(), out.data());
  EXPECT_EQ(out, (std::vector<S>{0, 0, 0}));
}

TYPED_TEST(Reference, RelErrorIsRelativeToTheMagnitude) {
  using S = TypeParam;
  const std::vector<S> ref = {3, 4}, near = {3, 4.5};
  // No cancellation (magnitude == |ref|): the same as rel_l2_error.
  EXPECT_EQ(reference::rel_error(near.data(), ref.data(), ref.data(), 2),
            reference::rel_l2_error(near.data(), ref.data(), 2));
  const std::vector<S> big = {30, 40};
  EXPECT_NEAR(reference::rel_error(near.data(), ref.data(), big.data(), 2), 0.01, 1e-12);
  const std::vector<S> with_inf = {3, std::numeric_limits<S>::infinity()};
  EXPECT_TRUE(std::isinf(reference::rel_error(with_inf.data(), ref.data(), big.data(), 2)));
  const std::vector<S> zero = {0, 0}, small = {0, 1e-3f};
  EXPECT_NEAR(reference::rel_error(small.data(), zero.data(), zero.data(), 2), 1e-3, 1e-9);
}

// y = -0.75*2.5*1 + 1.5*y0 with y0 one ulp above 1.25: the terms (1.875 each) cancel down to
// ref = 1.5 ulp(1). A result off by one ulp of the terms, as a correct kernel in S may be, has a
// large rel_l2_error but a rel_error within the tolerance.
TYPED_TEST(Reference, RelErrorIsNotInflatedByCancellation) {
  using S = TypeParam;
  const auto a = from_triplets<S>(1, 1, {{0, 0, 2.5}});
  const std::vector<S> x = {1}, y0 = {std::nextafter(S(1.25), S(2))};
  const S alpha = -0.75, beta = 1.5, ulp = std::numeric_limits<S>::epsilon();
  auto ref = y0;
  reference::spmv(alpha, a, x.data(), beta, ref.data());
  ASSERT_EQ(ref[0], S(1.5) * ulp);
  const std::vector<S> y = {ref[0] + ulp};
  std::vector<S> magnitude(1);
  reference::spmv_magnitude(alpha, a, x.data(), beta, y0.data(), magnitude.data());
  EXPECT_NEAR(magnitude[0], 3.75, 4 * ulp);
  EXPECT_GT(reference::rel_l2_error(y.data(), ref.data(), 1), 0.5);
  const double err = reference::rel_error(y.data(), ref.data(), magnitude.data(), 1);
  EXPECT_LT(err, ulp);  // ulp / 3.75
  EXPECT_LT(err, reference::tolerance<S>());
}

}  // namespace
}  // namespace kspmv::test

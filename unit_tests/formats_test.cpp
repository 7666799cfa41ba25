#include <gtest/gtest.h>

#include "test_matrices.hpp"

TEST(CsrSkeleton, ZooMatricesValidate) {
  for (const auto& [name, a] : kspmv::test::zoo<double>()) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(a.validate());
    EXPECT_TRUE(a.is_sorted_unique());
  }
}

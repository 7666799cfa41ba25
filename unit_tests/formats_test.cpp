#include <gtest/gtest.h>

#include "kspmv/formats/convert.hpp"

TEST(CsrSkeleton, EmptyMatrixValidates) {
  kspmv::CsrMatrix<double> a(0, 0, 0);
  EXPECT_NO_THROW(a.validate());
  EXPECT_EQ(a.nnz(), 0);
}

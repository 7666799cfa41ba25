// kspmv::Operator guarding against a caller's mistakes: an invalid matrix, x and y that overlap,
// use after a move. Host backend (the checks sit in front of every backend).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/operator.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

// A valid 4 x 4 matrix to break in one place.
CsrMatrix<double> small() {
  return from_triplets<double>(4, 4, {{0, 0, 1}, {1, 2, 2}, {2, 1, 3}, {3, 3, 4}, {3, 0, 5}});
}

void expect_rejected(const CsrMatrix<double>& a, const std::string& needle) {
  try {
    Operator<double> op(a);
    ADD_FAILURE() << "accepted a matrix with " << needle;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(OperatorValidation, RejectsAColumnIndexOutOfRangeNamingIt) {
  auto a = small();
  a.col_idx(3) = 4;
  expect_rejected(a, "index 4 at position 3");
  a.col_idx(3) = -1;
  expect_rejected(a, "index -1 at position 3");
}

TEST(OperatorValidation, RejectsARowPointerThatDecreasesOrRunsPastTheArrays) {
  auto a = small();
  a.row_ptr(2) = 1;  // row 1 now ends before it starts... and row 2 is long
  a.row_ptr(1) = 2;
  expect_rejected(a, "decreases at 1");
  auto b = small();
  b.row_ptr(4) = 50;
  expect_rejected(b, "nnz = 50");
}

TEST(OperatorValidation, RejectsNegativeSizes) {
  CsrMatrix<double> a;
  a.nrows = -1;
  expect_rejected(a, "non-negative");
}

TEST(OperatorValidation, CanBeSkippedByACallerWhoChecked) {
  Options o;
  o.validate = false;
  Operator<double> op(small(), o);
  std::vector<double> x(4, 1.0), y(4, 0.0);
  op.apply(1.0, x.data(), 0.0, y.data());
  EXPECT_EQ(y[3], 9.0);
}

TEST(OperatorValidation, ConversionsCheckTheirInputBeforeWriting) {
  auto a = small();
  a.col_idx(0) = 7;
  EXPECT_THROW(transpose(a), InvalidArgument);
  EXPECT_THROW(to_coo(a), InvalidArgument);
  EXPECT_THROW(to_csc(a), InvalidArgument);
  CooMatrix<double> c(2, 2, 1);
  c.row_idx(0) = 5, c.col_idx(0) = 0, c.values(0) = 1;
  EXPECT_THROW(to_csr(c), InvalidArgument);
}

// Options checked on every backend, whatever the others are (the issue: {-5} and {} were taken
// on the host backend).
TEST(OperatorOptions, RejectsAnEmptyOrNegativeDeviceListOnEveryBackend) {
  for (const Backend b : kBackends) {
    Options o;
    o.backend = b;
    for (const std::vector<int>& devices :
         {std::vector<int>{}, std::vector<int>{-5}, std::vector<int>{0, -2}}) {
      o.devices = devices;
      EXPECT_THROW(Operator<double>(small(), o), InvalidArgument) << to_string(b);
    }
  }
}

// An option that would do nothing is refused rather than taken silently.
TEST(OperatorOptions, RejectsOptionsThatWouldDoNothing) {
  Options o;
  o.autotune = true;  // a CUDA option: the host backend has no candidates to time
  try {
    Operator<double> op(small(), o);
    ADD_FAILURE() << "autotune accepted on the host backend";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("autotune"), std::string::npos) << e.what();
  }
  o = Options();
  o.backend = Backend::Cuda, o.kernel = Kernel::CsrVector, o.autotune = true;
  EXPECT_THROW(Operator<double>(small(), o), InvalidArgument);  // before any device is needed
  o = Options();
  o.chunks = 2;  // one device: nothing to hide the exchange under
  EXPECT_THROW(Operator<double>(small(), o), InvalidArgument);
  o.devices = {0, 0, 0, 0}, o.partition = part::Scheme::PCSC, o.exchange = part::Exchange::Merge;
  EXPECT_THROW(Operator<double>(small(), o), InvalidArgument);
  o.partition = part::Scheme::NZ;
  Operator<double> chunked(small(), o);
  EXPECT_EQ(chunked.options().chunks, 2);
}

TEST(OperatorApply, RejectsXAndYThatOverlapAndLeavesYUnchanged) {
  Operator<double> op(small());
  std::vector<double> v(8, 1.0);
  EXPECT_THROW(op.apply(1.0, v.data(), 0.0, v.data()), InvalidArgument);
  EXPECT_THROW(op.apply(1.0, v.data() + 2, 0.0, v.data()), InvalidArgument);
  EXPECT_EQ(v, std::vector<double>(8, 1.0));
  const HostView<double> view(v.data(), 4);
  EXPECT_THROW(op.apply(1.0, view, 0.0, view), InvalidArgument);
  op.apply(1.0, v.data(), 0.0, v.data() + 4);  // apart: fine
  EXPECT_EQ(v[4], 1.0);
}

TEST(OperatorApply, AMovedFromOperatorThrowsInsteadOfCrashing) {
  Operator<double> op(small());
  Operator<double> other(std::move(op));
  std::vector<double> x(4, 1.0), y(4, 0.0);
  EXPECT_THROW(op.apply(1.0, x.data(), 0.0, y.data()),
               InvalidArgument);  // NOLINT(bugprone-use-after-move)
  EXPECT_THROW(op.kernel(), InvalidArgument);
  other.apply(1.0, x.data(), 0.0, y.data());
  EXPECT_EQ(y[0], 1.0);
}

}  // namespace
}  // namespace kspmv::test

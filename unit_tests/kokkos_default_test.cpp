// The kokkos-default backend beyond the conformance test: a CSR adopted from arrays in the memory
// of Kokkos' default execution space (the device's with a CUDA Kokkos, the host's otherwise) with
// offsets and indices of every width, checked there; its transpose and value refresh; what the
// registry says of the backend. Each result against the long-double oracle on a NaN-poisoned y.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/kokkos/default_space_operator.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;

// `v` converted to T, in Memory.
template <class T, class V>
Kokkos::View<T*, Memory> in_space(const V& v) {
  const auto h = Kokkos::View<T*, HostMemorySpace>("h", v.extent(0));
  for (std::size_t i = 0; i < v.extent(0); ++i) h(i) = static_cast<T>(v(i));
  Kokkos::View<T*, Memory> d("d", v.extent(0));
  Kokkos::deep_copy(d, h);
  return d;
}

// The arrays of `a` in Memory with offsets of type O and column indices of type C, kept alive by
// the holder as long as the operator borrows them.
template <class O, class C, class S>
struct SpaceMatrix {
  Kokkos::View<O*, Memory> row_ptr;
  Kokkos::View<C*, Memory> col;
  Kokkos::View<S*, Memory> val;
  DeviceCsrArrays<S> arrays;

  explicit SpaceMatrix(const CsrMatrix<S>& a)
      : row_ptr(in_space<O>(a.row_ptr)), col(in_space<C>(a.col_idx)), val(in_space<S>(a.values)) {
    arrays = {row_ptr.data(), int(sizeof(O)), std::is_signed_v<O>,
              col.data(),     int(sizeof(C)), val.data(),
              a.nrows,        a.ncols,        col.extent(0)};
  }
};

// y = alpha*op(A)*x + beta*y through `op` with host vectors, against the oracle on `b` = op(A).
template <class S>
double error_of(OperatorImpl<S>& op, const CsrMatrix<S>& b, S alpha, S beta) {
  const auto x = random_vector<S>(b.ncols, 3);
  const auto y0 = beta == S(0) ? nan_vector<S>(b.nrows) : random_vector<S>(b.nrows, 4);
  auto y = y0, ref = y0;
  op.apply_host(alpha, x.data(), beta, y.data());
  reference::spmv(alpha, b, x.data(), beta, ref.data());
  return spmv_error(y, ref, alpha, b, x.data(), beta, y0);
}

template <class O, class C>
void check_adopted() {
  for (const auto& [name, a] : zoo<double>()) {
    const SpaceMatrix<O, C, double> d(a);
    Options o;
    o.backend = Backend::KokkosDefault;
    const auto op = host::make_default_space_operator(d.arrays, o);
    const double tol = reference::tolerance<double>();
    EXPECT_EQ(op->kernel(), Kernel::Csr);
    EXPECT_LE(error_of(*op, a, 1.5, 0.0), tol) << name;
    EXPECT_LE(error_of(*op, a, -0.5, 2.0), tol) << name;
    ASSERT_TRUE(op->transposes_itself());
    EXPECT_LE(error_of(*op->make_transpose(), transpose(a), 1.0, 0.0), tol) << name << " transpose";
    // New values from the host: the caller's array is not written.
    CsrMatrix<double> b = a;
    b.values = make_host_view<double>("values", a.nnz());
    const auto v = random_vector<double>(a.nnz(), 5);
    std::copy(v.begin(), v.end(), b.values.data());
    op->update_values(v.data(), false);
    EXPECT_LE(error_of(*op, b, 1.0, 0.0), tol) << name << " refreshed";
    EXPECT_LE(error_of(*op->make_transpose(), transpose(b), 1.0, 0.0), tol)
        << name << " transpose refreshed";
    const auto old = Kokkos::create_mirror_view_and_copy(HostMemorySpace(), d.val);
    for (Offset k = 0; k < a.nnz(); ++k) EXPECT_EQ(old(k), a.values(k)) << name;
  }
}

TEST(KokkosDefault, AdoptsArraysOfEveryWidth) {
  check_adopted<std::int32_t, std::int32_t>();
  check_adopted<std::uint32_t, std::int32_t>();
  check_adopted<std::int64_t, std::int32_t>();
  check_adopted<std::uint64_t, std::int64_t>();
}

TEST(KokkosDefault, ChecksAdoptedArraysInTheSpace) {
  const auto a = random_matrix<double>(40, 30, 4, 2);
  Options o;
  o.backend = Backend::KokkosDefault;
  const auto expect_error = [&](const DeviceCsrArrays<double>& arrays, const std::string& what) {
    try {
      host::make_default_space_operator(arrays, o);
      ADD_FAILURE() << "no error; expected: " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  {  // a row map that decreases after row 7
    CsrMatrix<double> b = a;
    b.row_ptr = make_host_view<Offset>("row_ptr", a.nrows + 1);
    for (Ordinal i = 0; i <= a.nrows; ++i) b.row_ptr(i) = a.row_ptr(i);
    b.row_ptr(8) = b.row_ptr(7) - 1;
    expect_error(SpaceMatrix<std::int64_t, std::int32_t, double>(b).arrays,
                 "decreases after row 7");
  }
  {  // a row map that does not end at the entries' count
    CsrMatrix<double> b = a;
    b.row_ptr = make_host_view<Offset>("row_ptr", a.nrows + 1);
    for (Ordinal i = 0; i <= a.nrows; ++i) b.row_ptr(i) = a.row_ptr(i);
    b.row_ptr(a.nrows) -= 1;
    expect_error(SpaceMatrix<std::int32_t, std::int32_t, double>(b).arrays,
                 "does not run from 0 to the");
  }
  {  // a column index past the last column, 32 and 64 bits wide
    CsrMatrix<double> b = a;
    b.col_idx = make_host_view<Ordinal>("col", a.nnz());
    for (Offset k = 0; k < a.nnz(); ++k) b.col_idx(k) = a.col_idx(k);
    b.col_idx(11) = a.ncols;
    const std::string what = "column index 30 of entry 11 is outside [0, 30)";
    expect_error(SpaceMatrix<std::int64_t, std::int32_t, double>(b).arrays, what);
    expect_error(SpaceMatrix<std::int64_t, std::int64_t, double>(b).arrays, what);
  }
  Options coo = o;
  coo.kernel = Kernel::Coo;
  EXPECT_THROW(host::make_default_space_operator(
                   SpaceMatrix<std::int64_t, std::int32_t, double>(a).arrays, coo),
               UnsupportedError);
}

TEST(KokkosDefault, RegistryNamesWhereItRuns) {
  EXPECT_STREQ(execution_space_name(Backend::KokkosDefault), Kokkos::DefaultExecutionSpace::name());
  EXPECT_EQ(runs_on_device(Backend::KokkosDefault), !host::default_space_is_host());
  EXPECT_FALSE(runs_on_device(Backend::Host));
  for (const Kernel k : {Kernel::Csr, Kernel::Coo, Kernel::Csc})
    EXPECT_TRUE(supports(Backend::KokkosDefault, k)) << to_string(k);
  EXPECT_FALSE(supports(Backend::KokkosDefault, Kernel::CsrVector));
  EXPECT_EQ(parse_backend("kokkos-default"), Backend::KokkosDefault);
  Options two;  // one device: Kokkos' own
  two.backend = Backend::KokkosDefault;
  two.devices = {0, 0};
  EXPECT_THROW(Operator<double>(random_matrix<double>(10, 10, 2, 1), two), UnsupportedError);
}

}  // namespace
}  // namespace kspmv::test

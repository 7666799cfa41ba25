// The KokkosSparse adapter (kspmv/interop/kokkos_sparse.hpp): an Operator from a
// KokkosSparse::CrsMatrix in host memory and in Kokkos' default memory space, with row maps of
// several integer types, on every backend that takes it; each result against the long-double
// oracle on a NaN-poisoned y, the vectors as Views beside the matrix. Built when CMake finds a
// Kokkos Kernels of the Kokkos version (unit_tests/CMakeLists.txt). And kspmv::spmv on a
// KokkosSparse::CrsMatrix: the four modes, both layouts, rank 1 and rank 2 (spmv_check.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/interop/kokkos_sparse.hpp"
#include "spmv_check.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

using HostDevice = Kokkos::Device<HostExecSpace, HostMemorySpace>;
using SpaceDevice = Kokkos::DefaultExecutionSpace::device_type;

// `a` as a KokkosSparse::CrsMatrix with row map entries of type Size, in Device's memory.
template <class Size, class Device, class S>
KokkosSparse::CrsMatrix<S, int, Device, void, Size> kokkos_sparse(const CsrMatrix<S>& a) {
  using Matrix = KokkosSparse::CrsMatrix<S, int, Device, void, Size>;
  typename Matrix::row_map_type::non_const_type row_map("row_map", a.nrows + 1);
  typename Matrix::index_type::non_const_type entries("entries", a.nnz());
  typename Matrix::values_type::non_const_type values("values", a.nnz());
  const auto r = Kokkos::create_mirror_view(row_map);
  const auto c = Kokkos::create_mirror_view(entries);
  const auto v = Kokkos::create_mirror_view(values);
  for (Ordinal i = 0; i <= a.nrows; ++i) r(i) = static_cast<Size>(a.row_ptr(i));
  for (Offset k = 0; k < a.nnz(); ++k) c(k) = a.col_idx(k), v(k) = a.values(k);
  Kokkos::deep_copy(row_map, r);
  Kokkos::deep_copy(entries, c);
  Kokkos::deep_copy(values, v);
  return Matrix("A", a.nrows, a.ncols, static_cast<Size>(a.nnz()), values, row_map, entries);
}

// y = 1.5*A*x on a NaN-poisoned y through the adapter, the vectors in Device's memory space on an
// instance of its execution space; the relative error against the oracle.
template <class Size, class Device, class S>
double adapter_error(const CsrMatrix<S>& a, Backend backend) {
  Options o;
  o.backend = backend;
  auto op = make_operator(kokkos_sparse<Size, Device>(a), o);  // the matrix itself goes
  const auto x = random_vector<S>(a.ncols, 7);
  const auto y0 = nan_vector<S>(a.nrows);
  Kokkos::View<S*, typename Device::memory_space> dx("x", a.ncols), dy("y", a.nrows);
  Kokkos::deep_copy(dx, HostView<const S>(x.data(), x.size()));
  Kokkos::deep_copy(dy, HostView<const S>(y0.data(), y0.size()));
  const typename Device::execution_space exec;
  op.apply(exec, S(1.5), dx, S(0), dy);
  exec.fence();
  std::vector<S> y(a.nrows), ref(a.nrows);
  Kokkos::deep_copy(HostView<S>(y.data(), y.size()), dy);
  reference::spmv(S(1.5), a, x.data(), S(0), ref.data());
  return spmv_error(y, ref, S(1.5), a, x.data(), S(0), y0);
}

template <class S>
void check_backend(Backend backend) {
  const std::vector<std::pair<std::string, CsrMatrix<S>>> matrices = {
      {"random", random_matrix<S>(300, 200, 7, 3)},
      {"no entries", random_matrix<S>(50, 40, 0, 4)},
      {"long row", random_matrix<S>(3, 5000, 3000, 5)}};
  for (const auto& [name, a] : matrices) {
    const double tol = reference::tolerance<S>();
    if (!runs_on_device(backend)) {  // host memory
      EXPECT_LE((adapter_error<std::size_t, HostDevice>(a, backend)), tol) << name << " size_t";
      EXPECT_LE((adapter_error<int, HostDevice>(a, backend)), tol) << name << " int";
      EXPECT_LE((adapter_error<std::int64_t, HostDevice>(a, backend)), tol) << name << " int64";
    }
    if (backend != Backend::Host) {  // Kokkos' default memory space (the device with CUDA)
      EXPECT_LE((adapter_error<std::size_t, SpaceDevice>(a, backend)), tol) << name << " size_t";
      EXPECT_LE((adapter_error<int, SpaceDevice>(a, backend)), tol) << name << " int";
    }
  }
}

TEST(KokkosSparseAdapter, HostBackendMatchesReference) {
  check_backend<double>(Backend::Host);
  check_backend<float>(Backend::Host);
}

TEST(KokkosSparseAdapter, KokkosDefaultBackendMatchesReference) {
  check_backend<double>(Backend::KokkosDefault);
  check_backend<float>(Backend::KokkosDefault);
}

TEST(KokkosSparseAdapter, CudaBackendMatchesReference) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  check_backend<double>(Backend::Cuda);
  check_backend<float>(Backend::Cuda);
}

TEST(KokkosSparseAdapter, KeepsTheArraysWhenTheMatrixGoes) {
  const auto a = random_matrix<double>(100, 100, 5, 9);
  std::unique_ptr<Operator<double>> op;
  {
    const auto crs = kokkos_sparse<std::size_t, HostDevice>(a);
    op = std::make_unique<Operator<double>>(make_operator(crs));
  }
  const auto x = random_vector<double>(a.ncols, 1);
  std::vector<double> y(a.nrows), ref(a.nrows);
  op->apply(1.0, x.data(), 0.0, y.data());
  reference::spmv(1.0, a, x.data(), 0.0, ref.data());
  EXPECT_LE(reference::rel_l2_error(y.data(), ref.data(), y.size()),
            reference::tolerance<double>());
}

// kspmv::spmv(exec, handle, mode, ...) on `a` as a KokkosSparse::CrsMatrix in Device's memory, with
// x and y there: every mode, both layouts, rank 1 (k == 0) and rank 2; one plan for all calls.
template <class Device, class S>
void check_spmv(const CsrMatrix<S>& a, const std::string& what) {
  using M = typename Device::memory_space;
  const auto crs = kokkos_sparse<int, Device>(a);
  SpmvHandle<S> handle;
  const typename Device::execution_space exec;
  std::uint64_t seed = 70;
  for (const char* mode : {"N", "T", "C", "H"})
    for (const int k : {0, 1, 3})
      for (const auto& scalars : {std::pair<S, S>{1.5, 0}, {-0.5, 2}}) {
        const S alpha = scalars.first, beta = scalars.second;
        const auto call = [&](auto x, auto y) { spmv(exec, handle, mode, alpha, crs, x, beta, y); };
        const std::string at = what + " mode " + mode + " k=" + std::to_string(k);
        EXPECT_LE((spmv_call_error<Kokkos::LayoutLeft, M>(a, mode, k, alpha, beta, ++seed, call)),
                  reference::tolerance<S>())
            << at << " LayoutLeft";
        EXPECT_LE((spmv_call_error<Kokkos::LayoutRight, M>(a, mode, k, alpha, beta, ++seed, call)),
                  reference::tolerance<S>())
            << at << " LayoutRight";
      }
  EXPECT_EQ(handle.plans_built(), 1) << what;
}

TEST(KokkosSparseSpmv, EveryModeLayoutAndRankMatchesReference) {
  const std::vector<std::pair<std::string, CsrMatrix<double>>> matrices = {
      {"random", random_matrix<double>(300, 200, 7, 3)},
      {"no entries", random_matrix<double>(50, 40, 0, 4)},
      {"long row", random_matrix<double>(3, 5000, 3000, 5)}};
  for (const auto& [name, a] : matrices) {
    check_spmv<HostDevice>(a, name + " host");
    check_spmv<SpaceDevice>(a, name + " default space");  // CudaSpace with a CUDA Kokkos
  }
  check_spmv<SpaceDevice>(random_matrix<float>(200, 300, 5, 6), "float default space");
}

}  // namespace
}  // namespace kspmv::test

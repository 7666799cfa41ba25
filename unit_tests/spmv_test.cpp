// kspmv::spmv (kspmv/spmv.hpp), KokkosSparse::spmv's call shape: kspmv's host matrix and an
// Operator as A, the modes N, T, C and H, rank-1 and rank-2 Views of LayoutLeft and LayoutRight
// (and strided rank-1 Views) in host memory and in Kokkos' default memory space, each column
// against the long-double oracle with y poisoned where beta == 0; the handle's plan built once per
// matrix, the backend and device taken from the call.
#include <gtest/gtest.h>

#include <string>

#include "kspmv/spmv.hpp"
#include "spmv_check.hpp"

namespace kspmv::test {
namespace {

using Space = Kokkos::DefaultExecutionSpace;
const char* const kModes[] = {"N", "T", "C", "H"};

// Whether the backend that kspmv::spmv takes for Views of Kokkos' default memory space has a
// registry row that takes complex values (CUDA's do, kokkos-default's on a device do not).
bool space_takes_complex() {
  const Backend backend = detail::spmv_options<Space::memory_space>(Space()).backend;
  for (const KernelInfo& row : kernel_registry())
    if (row.backend == backend && row.complex_values) return true;
  return false;
}

// Every mode, layout and rank (k = 0: rank 1) on both memory spaces, through kspmv's host matrix.
// Complex values where Kokkos' default memory space is a device's whose backend takes none
// (kokkos-default): the call must say so.
template <class S>
void check_matrix(const CsrMatrix<S>& a, const std::string& what, S alpha2 = S(-0.5),
                  S beta2 = S(2)) {
  SpmvHandle<S> host_handle, space_handle;
  const bool space = !is_complex_v<S> || space_takes_complex();
  if (!space) {
    Kokkos::View<S*, Space::memory_space> x("x", a.ncols), y("y", a.nrows);
    EXPECT_THROW(spmv(Space(), space_handle, "N", S(1), a, x, S(0), y), UnsupportedError) << what;
  }
  std::uint64_t seed = 40;
  for (const char* mode : kModes)
    for (const int k : {0, 1, 4})
      for (const auto& scalars : {std::pair<S, S>{S(1.5), S(0)}, {alpha2, beta2}}) {
        const S alpha = scalars.first, beta = scalars.second;
        const auto on_host = [&](auto x, auto y) {
          spmv(HostExecSpace(), host_handle, mode, alpha, a, x, beta, y);
        };
        const auto on_space = [&](auto x, auto y) {
          spmv(Space(), space_handle, mode, alpha, a, x, beta, y);
        };
        const double tol = reference::tolerance<S>();
        const std::string at = what + " mode " + mode + " k=" + std::to_string(k);
        EXPECT_LE((spmv_call_error<Kokkos::LayoutLeft, HostMemorySpace>(a, mode, k, alpha, beta,
                                                                        ++seed, on_host)),
                  tol)
            << at << " host LayoutLeft";
        EXPECT_LE((spmv_call_error<Kokkos::LayoutRight, HostMemorySpace>(a, mode, k, alpha, beta,
                                                                         ++seed, on_host)),
                  tol)
            << at << " host LayoutRight";
        if (!space) continue;
        EXPECT_LE((spmv_call_error<Kokkos::LayoutLeft, Space::memory_space>(a, mode, k, alpha, beta,
                                                                            ++seed, on_space)),
                  tol)
            << at << " space LayoutLeft";
        EXPECT_LE((spmv_call_error<Kokkos::LayoutRight, Space::memory_space>(
                      a, mode, k, alpha, beta, ++seed, on_space)),
                  tol)
            << at << " space LayoutRight";
      }
  EXPECT_EQ(host_handle.plans_built(), 1) << what;
  EXPECT_EQ(space_handle.plans_built(), space ? 1 : 0) << what;
}

TEST(Spmv, EveryModeLayoutAndRankMatchesReference) {
  for (const auto& [name, a] : zoo<double>()) check_matrix(a, "double " + name);
  for (const auto& [name, a] : zoo<float>()) check_matrix(a, "float " + name);
}

// Complex values (the zoo with random imaginary parts, complex alpha and beta): C and H
// conjugate the matrix.
TEST(Spmv, ComplexEveryModeLayoutAndRankMatchesReference) {
  using Z = Kokkos::complex<double>;
  using C = Kokkos::complex<float>;
  for (const auto& [name, a] : zoo<double>())
    check_matrix(gen::with_imaginary_parts<Z>(a, 8), "complex<double> " + name, Z(1.5, -0.5),
                 Z(-0.25, 2));
  for (const auto& [name, a] : zoo<float>())
    check_matrix(gen::with_imaginary_parts<C>(a, 9), "complex<float> " + name, C(0.5, 1), C(1, -1));
}

// An Operator as A: the handle keeps only the scratch, the Operator is the plan.
TEST(Spmv, OperatorAsTheMatrix) {
  const auto a = random_matrix<double>(120, 90, 6, 3);
  Operator<double> op(a);
  SpmvHandle<double> handle;
  for (const char* mode : kModes) {
    const auto call = [&](auto x, auto y) {
      spmv(HostExecSpace(), handle, mode, 2.0, op, x, 0.0, y);
    };
    EXPECT_LE(
        (spmv_call_error<Kokkos::LayoutRight, HostMemorySpace>(a, mode, 3, 2.0, 0.0, 7, call)),
        reference::tolerance<double>())
        << mode;
  }
  EXPECT_EQ(handle.plans_built(), 0);
}

// A column of a LayoutRight block is a strided rank-1 View: copied through the scratch.
TEST(Spmv, StridedRankOneViews) {
  const auto a = random_matrix<double>(60, 50, 5, 4);
  Kokkos::View<double**, Kokkos::LayoutRight, HostMemorySpace> xb("x", 50, 3), yb("y", 60, 2);
  const auto xs = random_vector<double>(50, 5);
  for (int i = 0; i < 50; ++i) xb(i, 1) = xs[i];
  Kokkos::deep_copy(yb, std::numeric_limits<double>::quiet_NaN());
  SpmvHandle<double> handle;
  spmv(HostExecSpace(), handle, "N", 1.0, a, Kokkos::subview(xb, Kokkos::ALL, 1), 0.0,
       Kokkos::subview(yb, Kokkos::ALL, 0));
  std::vector<double> y(60), ref(60);
  for (int i = 0; i < 60; ++i) y[i] = yb(i, 0);
  reference::spmv(1.0, a, xs.data(), 0.0, ref.data());
  EXPECT_LE(spmv_error(y, ref, 1.0, a, xs.data(), 0.0, {}), reference::tolerance<double>());
  for (int i = 0; i < 60; ++i) EXPECT_TRUE(std::isnan(yb(i, 1))) << "column 1 was written";
}

// The plan is rebuilt for another matrix (other Views), kept for the same one.
TEST(Spmv, HandleRebuildsForAnotherMatrix) {
  const auto a = random_matrix<double>(30, 40, 4, 1), b = random_matrix<double>(40, 30, 4, 2);
  SpmvHandle<double> handle;
  const auto call = [&](const CsrMatrix<double>& m) {
    return [&handle, &m](auto x, auto y) { spmv(HostExecSpace(), handle, "N", 1.0, m, x, 0.0, y); };
  };
  const double tol = reference::tolerance<double>();
  EXPECT_LE((spmv_call_error<Kokkos::LayoutLeft, HostMemorySpace>(a, "N", 0, 1.0, 0.0, 3, call(a))),
            tol);
  EXPECT_LE((spmv_call_error<Kokkos::LayoutLeft, HostMemorySpace>(a, "N", 2, 1.0, 0.0, 4, call(a))),
            tol);
  EXPECT_EQ(handle.plans_built(), 1);
  EXPECT_LE((spmv_call_error<Kokkos::LayoutLeft, HostMemorySpace>(b, "N", 0, 1.0, 0.0, 5, call(b))),
            tol);
  EXPECT_EQ(handle.plans_built(), 2);
  EXPECT_EQ(handle.plan()->nrows(), 40);
  handle.reset();
  EXPECT_EQ(handle.plan(), nullptr);
}

// Host memory takes the host backend; Kokkos' default memory space the backend that computes there
// (CUDA where built in with a Kokkos::Cuda instance), on the instance's device.
TEST(Spmv, BackendAndDeviceFromTheCall) {
  const auto a = random_matrix<double>(20, 20, 3, 6);
  Kokkos::View<double*, HostMemorySpace> hx("x", 20), hy("y", 20);
  SpmvHandle<double> host;
  spmv(HostExecSpace(), host, "N", 1.0, a, hx, 0.0, hy);
  EXPECT_EQ(host.plan()->options().backend, Backend::Host);
  if (!runs_on_device(Backend::KokkosDefault)) return;  // Kokkos' default space is the host's
  Kokkos::View<double*, Space::memory_space> dx("x", 20), dy("y", 20);
  SpmvHandle<double> device;
  const Space exec;
  spmv(exec, device, "N", 1.0, a, dx, 0.0, dy);
  exec.fence();
  const Options& o = device.plan()->options();
  EXPECT_EQ(o.backend,
            supports(Backend::Cuda, Kernel::Auto) ? Backend::Cuda : Backend::KokkosDefault);
#ifdef KOKKOS_ENABLE_CUDA
  EXPECT_EQ(o.devices, std::vector<int>{exec.cuda_device()});
#endif
}

TEST(Spmv, RefusesBadModesAndExtents) {
  const auto a = random_matrix<double>(20, 10, 3, 6);
  Kokkos::View<double*, HostMemorySpace> x("x", 10), y("y", 20), wrong("w", 11);
  SpmvHandle<double> handle;
  EXPECT_THROW(spmv(HostExecSpace(), handle, "X", 1.0, a, x, 0.0, y), InvalidArgument);
  EXPECT_THROW(spmv(HostExecSpace(), handle, "", 1.0, a, x, 0.0, y), InvalidArgument);
  EXPECT_THROW(spmv(HostExecSpace(), handle, "N", 1.0, a, wrong, 0.0, y), InvalidArgument);
  EXPECT_THROW(spmv(HostExecSpace(), handle, "T", 1.0, a, x, 0.0, y), InvalidArgument);
  SpmvHandle<double> fresh;  // no plan before its first call
  EXPECT_THROW(fresh.update_values(a.values), InvalidArgument);
  Options named;  // named options are taken as they are
  named.kernel = Kernel::Coo;
  SpmvHandle<double> coo(named);
  spmv(HostExecSpace(), coo, "n", 1.0, a, x, 0.0, y);
  EXPECT_EQ(coo.plan()->kernel(), Kernel::Coo);
}

}  // namespace
}  // namespace kspmv::test

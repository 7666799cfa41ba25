// The check of a kspmv::spmv call shared by spmv_test.cpp and kokkos_sparse_test.cpp: fresh random
// x and y (y poisoned with NaN where beta == 0) as Views of a layout and memory space, the call
// made, each column against the long-double oracle on op(A).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/complex.hpp"
#include "kspmv/formats/convert.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {

// The largest error over the columns of y = alpha*op(A)*x + beta*y made by call(x, y), with x and
// y Views of Layout in memory space M: rank 1 when k == 0, rank 2 of k columns otherwise. op(A)
// is A for mode N, A^T for T, conj(A) for C and A^H for H (conj: nothing on real values).
template <class Layout, class M, class S, class Call>
double spmv_call_error(const CsrMatrix<S>& a, const std::string& mode, int k, S alpha, S beta,
                       std::uint64_t seed, Call call) {
  const bool transposed = mode == "T" || mode == "H";
  CsrMatrix<S> b = transposed ? transpose(a) : a;
  if (is_complex_v<S> && (mode == "C" || mode == "H")) {
    CsrMatrix<S> c = b;
    c.values = HostView<S>("conj", b.values.extent(0));
    for (std::size_t e = 0; e < c.values.extent(0); ++e) {
      if constexpr (is_complex_v<S>) c.values(e) = Kokkos::conj(b.values(e));
    }
    b = c;
  }
  const auto m = static_cast<std::size_t>(b.nrows), n = static_cast<std::size_t>(b.ncols);
  const std::size_t kk = k == 0 ? 1 : static_cast<std::size_t>(k);
  const auto xs = random_vector<S>(n * kk, seed);
  const auto y0 = beta == S(0) ? nan_vector<S>(m * kk) : random_vector<S>(m * kk, seed + 1);
  std::vector<S> ys(m * kk);
  auto run = [&](auto x, auto y) {
    const auto hx = Kokkos::create_mirror_view(x);
    const auto hy = Kokkos::create_mirror_view(y);
    for (std::size_t c = 0; c < kk; ++c) {
      for (std::size_t i = 0; i < n; ++i) {
        if constexpr (decltype(x)::rank == 2)
          hx(i, c) = xs[c * n + i];
        else
          hx(i) = xs[i];
      }
      for (std::size_t i = 0; i < m; ++i) {
        if constexpr (decltype(y)::rank == 2)
          hy(i, c) = y0[c * m + i];
        else
          hy(i) = y0[i];
      }
    }
    Kokkos::deep_copy(x, hx);
    Kokkos::deep_copy(y, hy);
    call(x, y);
    Kokkos::fence();
    Kokkos::deep_copy(hy, y);
    for (std::size_t c = 0; c < kk; ++c)
      for (std::size_t i = 0; i < m; ++i) {
        if constexpr (decltype(y)::rank == 2)
          ys[c * m + i] = hy(i, c);
        else
          ys[i] = hy(i);
      }
  };
  if (k == 0)
    run(Kokkos::View<S*, Layout, M>("x", n), Kokkos::View<S*, Layout, M>("y", m));
  else
    run(Kokkos::View<S**, Layout, M>("x", n, kk), Kokkos::View<S**, Layout, M>("y", m, kk));
  double worst = 0;
  for (std::size_t c = 0; c < kk; ++c) {
    const std::vector<S> yc(ys.begin() + c * m, ys.begin() + (c + 1) * m);
    const std::vector<S> y0c(y0.begin() + c * m, y0.begin() + (c + 1) * m);
    auto ref = y0c;
    reference::spmv(alpha, b, xs.data() + c * n, beta, ref.data());
    const double e = spmv_error(yc, ref, alpha, b, xs.data() + c * n, beta, y0c);
    worst = e > worst || e != e ? e : worst;
  }
  return worst;
}

}  // namespace kspmv::test

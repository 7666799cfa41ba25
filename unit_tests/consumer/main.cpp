// Uses the installed library: the 2D Laplacian on a 4 x 4 grid, applied on the host through
// kspmv::Operator, compared with the product computed by hand. Exit status 0 when they agree and
// the CUDA backend is there exactly when the target linked has it (kspmv::kspmv_nocuda: never).
#include <kspmv/kspmv.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int g = 4, m = g * g;
  std::vector<std::vector<std::pair<int, double>>> rows(m);
  for (int i = 0; i < g; ++i) {
    for (int j = 0; j < g; ++j) {
      auto& r = rows[i * g + j];
      if (i > 0) r.push_back({(i - 1) * g + j, -1.0});
      if (j > 0) r.push_back({i * g + j - 1, -1.0});
      r.push_back({i * g + j, 4.0});
      if (j < g - 1) r.push_back({i * g + j + 1, -1.0});
      if (i < g - 1) r.push_back({(i + 1) * g + j, -1.0});
    }
  }
  int failures = 0;
#ifdef KSPMV_HAVE_CUDA  // kspmv::kspmv of a build with CUDA
  const bool cuda_linked = true;
#else
  const bool cuda_linked = false;
#endif
  if (kspmv::supports(kspmv::Backend::Cuda, kspmv::Kernel::Auto) != cuda_linked) {
    std::printf("the CUDA backend is %s, the target says it is %s\n",
                cuda_linked ? "missing" : "there", cuda_linked ? "there" : "not");
    ++failures;
  }
  {
    kspmv::Offset nnz = 0;
    for (const auto& r : rows) nnz += static_cast<kspmv::Offset>(r.size());
    kspmv::CsrMatrix<double> a(m, m, nnz);
    kspmv::Offset k = 0;
    for (int i = 0; i < m; ++i) {
      for (const auto& [col, val] : rows[i]) {
        a.col_idx(k) = col;
        a.values(k++) = val;
      }
      a.row_ptr(i + 1) = k;
    }
    a.validate();

    // x = 1 everywhere: A*x is 4 minus the number of neighbours, i.e. 2 at corners, 1 on the
    // edges and 0 inside. y starts at 1 and beta = 2 adds 2.
    kspmv::HostView<double> x("x", m), y("y", m);
    Kokkos::deep_copy(x, 1.0);
    Kokkos::deep_copy(y, 1.0);
    kspmv::Operator<double> op(a, kspmv::Options{});
    op.apply(1.0, x, 2.0, y);
    for (int i = 0; i < g; ++i) {
      for (int j = 0; j < g; ++j) {
        const int border = (i == 0 || i == g - 1) + (j == 0 || j == g - 1);
        const double expected = border + 2.0;
        if (std::fabs(y(i * g + j) - expected) > 1e-14) {
          std::printf("y(%d) = %g, expected %g\n", i * g + j, y(i * g + j), expected);
          ++failures;
        }
      }
    }
    std::printf("consumer: kernel %s, %s\n", kspmv::to_string(op.kernel()),
                failures == 0 ? "ok" : "WRONG");
  }
  return failures == 0 ? 0 : 1;
}

// The README's GPU example: a Kokkos application builds its matrix and vectors in Views of its
// default memory space (CudaSpace with a CUDA-enabled Kokkos, host memory otherwise), hands them
// to kspmv, and applies on an execution space instance. Exit status 0 when y is right.
#include <kspmv/kspmv.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  using Space = Kokkos::DefaultExecutionSpace;  // Kokkos::Cuda when Kokkos has CUDA
  using Memory = Space::memory_space;
  const int n = 100000;  // tridiagonal [-1 2 -1], built where the application computes
  Kokkos::View<int*, Memory> row_map("row_map", n + 1), entries("entries", 3 * n - 2);
  Kokkos::View<double*, Memory> values("values", 3 * n - 2), x("x", n), y("y", n);
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(int i) {
        const int first = i == 0 ? 0 : 3 * i - 1;  // row i starts after 2 + 3 (i - 1) entries
        int k = first;
        for (int j = i - 1; j <= i + 1; ++j) {
          if (j < 0 || j >= n) continue;
          entries(k) = j;
          values(k++) = i == j ? 2.0 : -1.0;
        }
        row_map(i + 1) = k;
        x(i) = 1.0;
      });
  Space exec;
  exec.fence();

  kspmv::Options options;  // the GPU when kspmv has CUDA and one is present
  options.backend = kspmv::cuda_device_count() > 0 ? kspmv::Backend::Cuda : kspmv::Backend::Host;
  // Views in CUDA memory are used where they lie (32-bit offsets and columns: no copy but the
  // values'); host Views are shared as the CsrMatrix constructor shares them.
  kspmv::Operator<double> op(n, row_map, entries, values, options);
  op.apply(exec, 1.0, x, 0.0, y);  // enqueued on exec's stream: no host synchronization
  exec.fence();                    // y = (1, 0, ..., 0, 1)

  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += h(i) != (i == 0 || i == n - 1 ? 1.0 : 0.0);
  std::printf("gpu example: backend %s, kernel %s, %s\n", kspmv::to_string(options.backend),
              kspmv::to_string(op.kernel()), wrong == 0 ? "ok" : "WRONG");
  return wrong == 0 ? 0 : 1;
}

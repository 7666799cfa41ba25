// HBP on the host execution space: Alg. 3 of paper 3 per block, the fixed part by static
// assignment and the competitive part by an atomic ticket (Sec. III-C), then the combine part.
#include "backends/host/hbp_spmv.hpp"

#include "kspmv/core/kokkos.hpp"

namespace kspmv::host {

template <class S>
void spmv(S alpha, const HbpMatrix<S>& a, const S* x, S beta, S* y) {
  const Ordinal m = a.nrows;
  if (m == 0) return;
  const Ordinal N = a.params.block_rows, M = a.params.block_cols, G = a.groups();
  const Ordinal blocks = alpha == S(0) ? 0 : a.blocks();
  const Ordinal warps = HostExecSpace().concurrency();
  const HbpSplit split = hbp_split(blocks, warps, a.params.fixed_fraction);
  Kokkos::View<S*, HostMemorySpace> partial(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kspmv::host::hbp::partial"),
      std::size_t(blocks) * N);
  Kokkos::View<Ordinal, HostMemorySpace> ticket("kspmv::host::hbp::ticket");
  const Ordinal* block_col = a.block_col.data();
  const Offset* begin_nnz = a.begin_nnz.data();
  const std::uint16_t* col = a.col.data();
  const S* data = a.data.data();
  const std::int8_t* add_sign = a.add_sign.data();
  const std::int8_t* zero_row = a.zero_row.data();
  const std::uint16_t* output_hash = a.output_hash.data();
  S* part = partial.data();
  // Alg. 3: every table position of block b, lanes of a warp group in turn.
  const auto run_block = [=](Ordinal b) {
    const S* xs = x + std::size_t(block_col[b]) * M;
    for (Ordinal p = 0; p < N; ++p) {
      const std::size_t slot = std::size_t(b) * N + p;
      double sum = 0;  // a lane's row may hold block_cols terms: float sums lose digits
      if (zero_row[slot] >= 0) {
        Offset j = begin_nnz[std::size_t(b) * G + p / kHbpWarp] + p % kHbpWarp - zero_row[slot];
        for (;; j += add_sign[j]) {
          sum += static_cast<double>(data[j]) * xs[col[j]];
          if (add_sign[j] < 0) break;
        }
      }
      part[std::size_t(b) * N + output_hash[slot]] = static_cast<S>(sum);
    }
  };
  Kokkos::parallel_for(
      "kspmv::host::hbp", Kokkos::RangePolicy<HostExecSpace>(0, warps), [=](Ordinal w) {
        for (Ordinal b = w * split.per_warp; b < (w + 1) * split.per_warp; ++b) run_block(b);
        for (Ordinal b; (b = split.fixed + Kokkos::atomic_fetch_add(&ticket(), 1)) < blocks;)
          run_block(b);
      });
  const Ordinal* combine_ptr = a.combine_ptr.data();
  const Ordinal* combine_block = a.combine_block.data();
  Kokkos::parallel_for("kspmv::host::hbp::combine", Kokkos::RangePolicy<HostExecSpace>(0, m),
                       [=](Ordinal i) {
                         const Ordinal r = i / N;
                         double sum = 0;
                         if (blocks > 0) {
                           for (Ordinal q = combine_ptr[r]; q < combine_ptr[r + 1]; ++q)
                             sum += part[std::size_t(combine_block[q]) * N + (i - r * N)];
                         }
                         const S ax = alpha * static_cast<S>(sum);
                         y[i] = beta == S(0) ? ax : ax + beta * y[i];
                       });
}

template void spmv(float, const HbpMatrix<float>&, const float*, float, float*);
template void spmv(double, const HbpMatrix<double>&, const double*, double, double*);

}  // namespace kspmv::host

// HBP on the host execution space: Alg. 3 of paper 3 per block, the fixed part by static
// assignment and the competitive part by an atomic ticket (Sec. III-C), then the combine part.
#include "backends/host/hbp_spmv.hpp"

#include <algorithm>

#include "kspmv/core/kokkos.hpp"

namespace kspmv::host {

template <class S>
void spmv(S alpha, const HbpMatrix<S>& a, const S* x, S beta, S* y) {
  const Ordinal m = a.nrows;
  if (m == 0) return;
  const Ordinal M = a.params.block_cols;
  const Ordinal blocks = alpha == S(0) ? 0 : a.blocks();
  const Ordinal warps = HostExecSpace().concurrency();
  const HbpSplit split = hbp_split(blocks, warps, a.params.fixed_fraction);
  Kokkos::View<S*, HostMemorySpace> partial(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kspmv::host::hbp::partial"),
      blocks > 0 ? a.slots() : 0);
  Kokkos::View<Ordinal, HostMemorySpace> ticket("kspmv::host::hbp::ticket");
  const Ordinal* block_col = a.block_col.data();
  const Ordinal* table_ptr = a.table_ptr.data();
  const Offset* begin_nnz = a.begin_nnz.data();
  const std::uint16_t* col = a.col.data();
  const S* data = a.data.data();
  const std::int8_t* add_sign = a.add_sign.data();
  const Ordinal* output_hash = a.output_hash.data();
  S* part = partial.data();
  // Alg. 3: the table slots of block b, lanes of a warp group in turn; lane l's row starts at
  // its group's first element + l.
  const auto run_block = [=](Ordinal b) {
    const S* xs = x + std::size_t(block_col[b]) * M;
    Offset group = begin_nnz[b];
    for (Ordinal g0 = table_ptr[b]; g0 < table_ptr[b + 1]; g0 += kHbpWarp) {
      const Ordinal lanes = std::min<Ordinal>(kHbpWarp, table_ptr[b + 1] - g0);
      Offset group_nnz = 0;
      for (Ordinal l = 0; l < lanes; ++l) {
        double sum = 0;  // a lane's row may hold block_cols terms: float sums lose digits
        for (Offset j = group + l;; j += add_sign[j]) {
          sum += static_cast<double>(data[j]) * xs[col[j]];
          ++group_nnz;
          if (add_sign[j] < 0) break;
        }
        part[output_hash[g0 + l]] = static_cast<S>(sum);
      }
      group += group_nnz;
    }
  };
  Kokkos::parallel_for(
      "kspmv::host::hbp", Kokkos::RangePolicy<HostExecSpace>(0, warps), [=](Ordinal w) {
        for (Ordinal b = w * split.per_warp; b < (w + 1) * split.per_warp; ++b) run_block(b);
        for (Ordinal b; (b = split.fixed + Kokkos::atomic_fetch_add(&ticket(), 1)) < blocks;)
          run_block(b);
      });
  // The combine part: row i's partial results are contiguous.
  const Ordinal* combine_ptr = a.combine_ptr.data();
  Kokkos::parallel_for("kspmv::host::hbp::combine", Kokkos::RangePolicy<HostExecSpace>(0, m),
                       [=](Ordinal i) {
                         double sum = 0;
                         if (blocks > 0) {
                           for (Ordinal q = combine_ptr[i]; q < combine_ptr[i + 1]; ++q)
                             sum += part[q];
                         }
                         const S ax = alpha * static_cast<S>(sum);
                         y[i] = beta == S(0) ? ax : ax + beta * y[i];
                       });
}

template void spmv(float, const HbpMatrix<float>&, const float*, float, float*);
template void spmv(double, const HbpMatrix<double>&, const double*, double, double*);

}  // namespace kspmv::host

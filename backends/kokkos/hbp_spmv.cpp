// HBP on the host execution space: Alg. 3 of paper 3 per warp group, the fixed part by static
// assignment and the competitive part by an atomic ticket (Sec. III-C), then the combine part.
#include "backends/kokkos/hbp_spmv.hpp"

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
  const Ordinal* group_ptr = a.group_ptr.data();
  const Offset* begin_nnz = a.begin_nnz.data();
  const std::uint16_t* col = a.col.data();
  const S* data = a.data.data();
  const std::int8_t* add_sign = a.add_sign.data();
  const Ordinal* output_hash = a.output_hash.data();
  S* part = partial.data();
  // Alg. 3 on warp group g (table slots slot0 + lane, lane < rows), as the GPU kernel reads it:
  // the rows' ends (add_sign -1, one per row, in element order) cut the column-major group into
  // segments of steps with the same active lanes; a segment of `width` lanes is a dense strip
  // whose element pos + step * width + r belongs to the r-th active lane.
  const auto run_group = [=](Ordinal g, Ordinal slot0, int rows, const S* xs) {
    double sum[kHbpWarp] = {};  // a lane's row may hold block_cols terms: float sums lose digits
    Offset ends[kHbpWarp];
    int found = 0;
    for (Offset e = begin_nnz[g]; e < begin_nnz[g + 1]; ++e)
      if (add_sign[e] < 0) ends[found++] = e;
    int lane_of[kHbpWarp];  // the active lanes in lane order
    for (int r = 0; r < rows; ++r) lane_of[r] = r;
    int width = rows;
    Offset pos = begin_nnz[g];
    for (int i = 0; i < rows;) {
      const Offset last = pos + (ends[i] - pos) / width * width;  // the step of the next end
      for (Offset step = pos; step <= last; step += width)
        for (int r = 0; r < width; ++r)
          sum[lane_of[r]] += static_cast<double>(data[step + r]) * xs[col[step + r]];
      int kept = 0;  // the lanes whose rows end in that step leave, the others keep their order
      for (int r = 0; r < width; ++r) {
        if (i < rows && ends[i] == last + r)
          ++i;
        else
          lane_of[kept++] = lane_of[r];
      }
      pos = last + width;
      width = kept;
    }
    for (int l = 0; l < rows; ++l) part[output_hash[slot0 + l]] = static_cast<S>(sum[l]);
  };
  const auto run_block = [=](Ordinal b) {
    const S* xs = x + std::size_t(block_col[b]) * M;
    for (Ordinal g = group_ptr[b]; g < group_ptr[b + 1]; ++g) {
      const Ordinal slot0 = table_ptr[b] + (g - group_ptr[b]) * kHbpWarp;
      run_group(g, slot0, std::min<Ordinal>(kHbpWarp, table_ptr[b + 1] - slot0), xs);
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

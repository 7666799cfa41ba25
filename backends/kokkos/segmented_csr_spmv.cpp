// segSpMV on the host execution space (paper 5, Sec. III: segment sums, then per-row sums).
#include "backends/kokkos/segmented_csr_spmv.hpp"

namespace kspmv::host {

namespace {
constexpr Offset kGroup = 32;
}  // namespace

template <class S>
void spmv(S alpha, const SegmentedCsr<S>& a, const S* x_ptr, S beta, S* y_ptr) {
  const Ordinal m = a.nrows;
  if (m == 0) return;
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const Kokkos::View<const S*, HostMemorySpace, Unmanaged> x(x_ptr, a.ncols);
  const Kokkos::View<S*, HostMemorySpace, Unmanaged> y(y_ptr, m);
  const auto row_seg_ptr = a.row_seg_ptr;
  const auto col = a.col_idx;
  const auto val = a.values;
  const Offset length = a.seg_length;
  const bool read_a = alpha != S(0);
  using Policy = Kokkos::RangePolicy<HostExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  Kokkos::parallel_for(
      "kspmv::host::seg", Policy(0, m), KOKKOS_LAMBDA(Ordinal i) {
        // Segment sums added in groups of kGroup, then the groups: a long row of short
        // segments (10^5 segments of 1) keeps float rounding near the GPU's tree of sums.
        S sum = 0, group = 0;
        if (read_a) {
          for (Offset s = row_seg_ptr(i); s < row_seg_ptr(i + 1); ++s) {
            S seg = 0;
            for (Offset k = s * length; k < (s + 1) * length; ++k) seg += val(k) * x(col(k));
            group += seg;
            if ((s - row_seg_ptr(i)) % kGroup == kGroup - 1) sum += group, group = 0;
          }
        }
        sum += group;
        const S ax = alpha * sum;
        y(i) = beta == S(0) ? ax : ax + beta * y(i);
      });
}

template void spmv(float, const SegmentedCsr<float>&, const float*, float, float*);
template void spmv(double, const SegmentedCsr<double>&, const double*, double, double*);

}  // namespace kspmv::host

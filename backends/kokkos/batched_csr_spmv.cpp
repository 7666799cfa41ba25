#include "backends/kokkos/batched_csr_spmv.hpp"

#include <algorithm>

#include "backends/kokkos/spmv.hpp"

namespace kspmv::host {

namespace {
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
}  // namespace

template <class S>
void spmv(S alpha, const BatchedCsr<S>& a, const S* x_ptr, S beta, S* y_ptr) {
  const Ordinal m = a.csr.nrows;
  if (m == 0) return;
  if (alpha == S(0)) return spmv(alpha, a.csr, x_ptr, beta, y_ptr);  // y = beta*y, A unread

  const auto row_ptr = a.csr.row_ptr;
  const auto col = a.csr.col_idx;
  const auto val = a.csr.values;
  const auto batches = a.batch_infos;
  const auto order = a.batches_by_vector;
  const Kokkos::View<const S*, HostMemorySpace, Unmanaged> x(x_ptr, a.csr.ncols);
  const Kokkos::View<S*, HostMemorySpace, Unmanaged> y(y_ptr, m);

  using Policy = Kokkos::TeamPolicy<HostExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  // Alg. 5/6: the batches of each vector size, one team per batch, one vector per row.
  for (int k = 0; k < 6; ++k) {
    const Ordinal first = a.vector_begin[k], count = a.vector_begin[k + 1] - first;
    if (count == 0) continue;
    const int vector_length = std::min(1 << k, Policy::vector_length_max());
    Kokkos::parallel_for(
        "kspmv::host::batched_csr", Policy(count, Kokkos::AUTO, vector_length),
        KOKKOS_LAMBDA(const Member& team) {
          const BatchInfo b = batches(order(first + team.league_rank()));
          Kokkos::parallel_for(
              Kokkos::TeamThreadRange(team, b.row_begin, b.row_end), [&](Ordinal i) {
                Acc sum = 0;
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(team, row_ptr(i), row_ptr(i + 1)),
                    [&](Offset j, Acc& acc) { acc += Acc(val(j)) * x(col(j)); }, sum);
                Kokkos::single(Kokkos::PerThread(team), [&]() {
                  const S ax = static_cast<S>(alpha * sum);
                  y(i) = beta == S(0) ? ax : ax + beta * y(i);
                });
              });
        });
  }
  // Alg. 9: one team per long row, the row's non-zeros split across the team's threads.
  const auto long_rows = a.long_row_infos;
  if (long_rows.extent(0) == 0) return;
  Kokkos::parallel_for(
      "kspmv::host::batched_csr_long_rows",
      Policy(static_cast<int>(long_rows.extent(0)), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Member& team) {
        const Ordinal i = long_rows(team.league_rank());
        Acc sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, row_ptr(i), row_ptr(i + 1)),
            [&](Offset j, Acc& acc) { acc += Acc(val(j)) * x(col(j)); }, sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          const S ax = static_cast<S>(alpha * sum);
          y(i) = beta == S(0) ? ax : ax + beta * y(i);
        });
      });
}

template void spmv(float, const BatchedCsr<float>&, const float*, float, float*);
template void spmv(double, const BatchedCsr<double>&, const double*, double, double*);

}  // namespace kspmv::host

// Host SpMV kernels on Kokkos::DefaultHostExecutionSpace (team/vector CSR, scatter COO and CSC).
#include "backends/host/spmv.hpp"

#include <Kokkos_ScatterView.hpp>
#include <algorithm>
#include <string>

namespace kspmv::host {

namespace {

using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
template <class T>
using In = Kokkos::View<const T*, HostMemorySpace, Unmanaged>;
template <class T>
using Out = Kokkos::View<T*, HostMemorySpace, Unmanaged>;

// Entries one vector lane sums before adding to its running sum: independent products give the
// compiler instruction-level parallelism that a single dependent chain of additions would not.
constexpr Offset kChunk = 4;
// Non-zeros one team should process: enough to amortize scheduling, small enough to balance.
constexpr double kNnzPerTeam = 4096;

// Sums are kept in double for both scalars: a float row of 10^5 entries summed in float would
// already miss the 1e-5 relative accuracy the tests (and users of float CG) expect.
using Acc = double;

// y = beta*y, with y = 0 (not beta*NaN) when beta == 0.
template <class S>
void scale(S beta, Ordinal m, S* y_ptr) {
  const Out<S> y(y_ptr, m);
  Kokkos::parallel_for(
      "kspmv::host::scale", Kokkos::RangePolicy<HostExecSpace>(0, m),
      KOKKOS_LAMBDA(Ordinal i) { y(i) = beta == S(0) ? S(0) : beta * y(i); });
}

// y = alpha*t + beta*y where t = A*x is scatter-added by `body(u, acc)` for `count` independent
// units u (entries or columns) into an Acc array through the access object acc. The scatter is
// non-atomic on Serial and duplicated or atomic on threaded host spaces (ScatterView picks).
// Body is a functor at namespace scope: nvcc does not let a lambda's type reach the template
// arguments of a function that launches an extended lambda.
template <class S, class Body>
void scatter_spmv(const char* label, S alpha, Ordinal m, S beta, S* y_ptr, Offset count,
                  const Body& body) {
  HostView<Acc> t(std::string(label) + "::t", m);  // zero-filled
  auto scatter = Kokkos::Experimental::create_scatter_view(t);
  using Policy = Kokkos::RangePolicy<HostExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                     Kokkos::IndexType<Offset>>;
  Kokkos::parallel_for(
      label, Policy(0, count), KOKKOS_LAMBDA(Offset u) {
        auto acc = scatter.access();
        body(u, acc);
      });
  Kokkos::Experimental::contribute(t, scatter);
  const Out<S> y(y_ptr, m);
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<HostExecSpace>(0, m), KOKKOS_LAMBDA(Ordinal i) {
        const S at = static_cast<S>(alpha * t(i));
        y(i) = beta == S(0) ? at : at + beta * y(i);
      });
}

// COO scatter unit: entry k adds its product to its row.
template <class S>
struct CooProducts {
  In<Ordinal> row, col;
  In<S> val, x;

  template <class Access>
  KOKKOS_INLINE_FUNCTION void operator()(Offset k, Access& acc) const {
    acc(row(k)) += Acc(val(k)) * x(col(k));
  }
};

// CSC scatter unit: column j adds val * x(j) to the rows of its entries.
template <class S>
struct CscProducts {
  In<Offset> col_ptr;
  In<Ordinal> row;
  In<S> val, x;

  template <class Access>
  KOKKOS_INLINE_FUNCTION void operator()(Offset j, Access& acc) const {
    const Acc xj = x(j);
    for (Offset k = col_ptr(j); k < col_ptr(j + 1); ++k) acc(row(k)) += val(k) * xj;
  }
};

using CsrPolicy = Kokkos::TeamPolicy<HostExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;

// The CSR kernel proper: a team per block of rows_per_team rows, a vector reduction per row.
// BetaZero removes the beta test from the per-row epilogue. A functor, not a lambda: nvcc does not
// let an extended lambda first capture a variable inside `if constexpr`.
template <bool BetaZero, class S>
struct CsrKernel {
  S alpha, beta;
  In<Offset> row_ptr;
  In<Ordinal> col;
  In<S> val, x;
  Out<S> y;
  Offset rows_per_team;

  KOKKOS_INLINE_FUNCTION void operator()(const CsrPolicy::member_type& team) const {
    // Rows counted in Offset: first + rows_per_team may pass 2^31 - 1 on the last team.
    const Offset m = y.extent(0), first = team.league_rank() * rows_per_team;
    const Offset last = first + rows_per_team < m ? first + rows_per_team : m;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, last), [&](Offset i) {
      const Offset begin = row_ptr(i), end = row_ptr(i + 1);
      const Offset chunks = (end - begin) / kChunk;
      const Offset tail = begin + chunks * kChunk;
      Acc sum = 0, rest = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, chunks),
          [&](Offset c, Acc& acc) {
            const Offset k = begin + c * kChunk;
            acc += (Acc(val(k)) * x(col(k)) + Acc(val(k + 1)) * x(col(k + 1))) +
                   (Acc(val(k + 2)) * x(col(k + 2)) + Acc(val(k + 3)) * x(col(k + 3)));
          },
          sum);
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, end - tail),
          [&](Offset c, Acc& acc) { acc += Acc(val(tail + c)) * x(col(tail + c)); }, rest);
      Kokkos::single(Kokkos::PerThread(team), [&]() {
        const S ax = static_cast<S>(alpha * (sum + rest));
        if constexpr (BetaZero)
          y(i) = ax;
        else
          y(i) = ax + beta * y(i);
      });
    });
  }
};

template <bool BetaZero, class S>
void csr_spmv(S alpha, const CsrMatrix<S>& a, const S* x_ptr, S beta, S* y_ptr) {
  const Ordinal m = a.nrows;
  const Offset nnz = a.nnz();
  const double mean = double(nnz) / m;
  const Offset rows_per_team =
      static_cast<Offset>(std::clamp(kNnzPerTeam / std::max(mean, 1.0), 1.0, double(m)));
  const int league = static_cast<int>((m + rows_per_team - 1) / rows_per_team);
  const CsrKernel<BetaZero, S> kernel{alpha,
                                      beta,
                                      In<Offset>(a.row_ptr.data(), std::size_t(m) + 1),
                                      In<Ordinal>(a.col_idx.data(), nnz),
                                      In<S>(a.values.data(), nnz),
                                      In<S>(x_ptr, a.ncols),
                                      Out<S>(y_ptr, m),
                                      rows_per_team};
  Kokkos::parallel_for("kspmv::host::csr", CsrPolicy(league, 1, csr_vector_length(mean)), kernel);
}

}  // namespace

int csr_vector_length(double mean_row_length) {
  using Policy = Kokkos::TeamPolicy<HostExecSpace>;
  const int max_length = std::min(32, Policy::vector_length_max());
  int length = 1;
  while (length * 2 <= max_length && length * 6 < mean_row_length) length *= 2;
  return length;
}

template <class S>
void spmv(S alpha, const CsrMatrix<S>& a, const S* x_ptr, S beta, S* y_ptr) {
  if (a.nrows == 0) return;
  if (alpha == S(0) || a.nnz() == 0) return scale(beta, a.nrows, y_ptr);
  if (beta == S(0))
    csr_spmv<true>(alpha, a, x_ptr, beta, y_ptr);
  else
    csr_spmv<false>(alpha, a, x_ptr, beta, y_ptr);
}

template <class S>
void spmv(S alpha, const CooMatrix<S>& a, const S* x_ptr, S beta, S* y_ptr) {
  const Ordinal m = a.nrows;
  const Offset nnz = a.nnz();
  if (m == 0) return;
  if (alpha == S(0) || nnz == 0) return scale(beta, m, y_ptr);
  const CooProducts<S> products{In<Ordinal>(a.row_idx.data(), nnz),
                                In<Ordinal>(a.col_idx.data(), nnz), In<S>(a.values.data(), nnz),
                                In<S>(x_ptr, a.ncols)};
  scatter_spmv("kspmv::host::coo", alpha, m, beta, y_ptr, nnz, products);
}

template <class S>
void spmv(S alpha, const CscMatrix<S>& a, const S* x_ptr, S beta, S* y_ptr) {
  const Ordinal m = a.nrows;
  const Offset nnz = a.nnz();
  if (m == 0) return;
  if (alpha == S(0) || nnz == 0) return scale(beta, m, y_ptr);
  const CscProducts<S> products{In<Offset>(a.col_ptr.data(), std::size_t(a.ncols) + 1),
                                In<Ordinal>(a.row_idx.data(), nnz), In<S>(a.values.data(), nnz),
                                In<S>(x_ptr, a.ncols)};
  scatter_spmv("kspmv::host::csc", alpha, m, beta, y_ptr, a.ncols, products);
}

#define KSPMV_INSTANTIATE(S)                                   \
  template void spmv(S, const CsrMatrix<S>&, const S*, S, S*); \
  template void spmv(S, const CooMatrix<S>&, const S*, S, S*); \
  template void spmv(S, const CscMatrix<S>&, const S*, S, S*);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv::host

// Host SpMV kernels on Kokkos::DefaultHostExecutionSpace (row-block CSR, scatter COO and CSC).
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

// Entries of a row summed into separate partial sums: independent gathers and products give the
// compiler instruction-level parallelism that a single dependent chain of additions would not.
constexpr Offset kChunk = 4;
// Non-zeros one work item should process: enough to amortize scheduling, small enough to balance.
constexpr double kNnzPerBlock = 4096;

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

// The CSR kernel: a work item per block of rows_per_block rows, each row one plain loop with four
// independent partial sums (four gathers of x in flight). Raw __restrict__ pointers let the
// compiler keep a row's state in registers; a team per block with a vector reduction per row (the
// GPU's shape) spent 4-8% more time on rows that read x at random (uniform, kron), as much on
// stencils. BetaZero removes the beta test from the per-row epilogue. A functor, not a lambda:
// nvcc does not let an extended lambda first capture a variable inside `if constexpr`.
template <bool BetaZero, class S>
struct CsrKernel {
  S alpha, beta;
  const Offset* row_ptr;
  const Ordinal* col;
  const S* val;
  const S* x;
  S* y;
  Offset nrows, rows_per_block;

  KOKKOS_INLINE_FUNCTION void operator()(Offset block) const {
    const Offset* __restrict__ ptr = row_ptr;
    const Ordinal* __restrict__ c = col;
    const S* __restrict__ v = val;
    const S* __restrict__ xs = x;
    S* __restrict__ ys = y;
    // Rows counted in Offset: first + rows_per_block may pass 2^31 - 1 on the last block.
    const Offset first = block * rows_per_block;
    const Offset last = first + rows_per_block < nrows ? first + rows_per_block : nrows;
    for (Offset i = first; i < last; ++i) {
      Offset k = ptr[i];
      const Offset end = ptr[i + 1];
      Acc s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (; k + kChunk <= end; k += kChunk) {
        s0 += Acc(v[k]) * xs[c[k]];
        s1 += Acc(v[k + 1]) * xs[c[k + 1]];
        s2 += Acc(v[k + 2]) * xs[c[k + 2]];
        s3 += Acc(v[k + 3]) * xs[c[k + 3]];
      }
      for (; k < end; ++k) s0 += Acc(v[k]) * xs[c[k]];
      const S ax = static_cast<S>(alpha * ((s0 + s1) + (s2 + s3)));
      if constexpr (BetaZero)
        ys[i] = ax;
      else
        ys[i] = ax + beta * ys[i];
    }
  }
};

template <bool BetaZero, class S>
void csr_spmv(S alpha, const CsrMatrix<S>& a, const S* x_ptr, S beta, S* y_ptr) {
  const Ordinal m = a.nrows;
  const double mean = double(a.nnz()) / m;
  const Offset rows_per_block =
      static_cast<Offset>(std::clamp(kNnzPerBlock / std::max(mean, 1.0), 1.0, double(m)));
  const Offset blocks = (m + rows_per_block - 1) / rows_per_block;
  const CsrKernel<BetaZero, S> kernel{
      alpha, beta, a.row_ptr.data(), a.col_idx.data(), a.values.data(), x_ptr,
      y_ptr, m,    rows_per_block};
  using Policy = Kokkos::RangePolicy<HostExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                     Kokkos::IndexType<Offset>>;
  Kokkos::parallel_for("kspmv::host::csr", Policy(0, blocks), kernel);
}

}  // namespace

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

// The portable Kokkos SpMV kernels, on any execution space Exec: CSR with a work item per block of
// rows on the host and a team of vector lanes per block of rows on a device, COO and CSC by
// scatter-adding products. The arrays, x and y live in the memory of Exec. The host backend runs
// them on the default host execution space (spmv.hpp), the kokkos-default backend on Kokkos'
// default execution space, a GPU with a CUDA Kokkos (default_space_operator.hpp). Semantics are
// cuSPARSE's: beta == 0 overwrites y (NaN included); alpha == 0 leaves A unread. Sums are kept in
// double for both scalars: a float row of 10^5 entries summed in float would already miss the
// 1e-5 relative accuracy the tests (and users of float CG) expect. Each call is enqueued on `exec`
// and returns without waiting for it.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>
#include <algorithm>

#include "kspmv/core/types.hpp"

namespace kspmv::host {

using Acc = double;

template <class Exec, class T>
using SpaceIn =
    Kokkos::View<const T*, typename Exec::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Exec, class T>
using SpaceOut =
    Kokkos::View<T*, typename Exec::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
// A work array of the scatter kernels (COO, CSC): one Acc per row, in Exec's memory.
template <class Exec>
using ScatterWork = Kokkos::View<Acc*, typename Exec::memory_space>;

// Whether Exec is a host space (threads of the CPU) rather than a device: the CSR kernel then
// runs a plain loop per row (HostCsrKernel) instead of a vector reduction.
template <class Exec>
inline constexpr bool kOnHost = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;

// The matrix as the kernels read it, in Exec's memory (nnz is known without reading the arrays).
template <class Exec, class S>
struct CsrArrays {
  SpaceIn<Exec, Offset> row_ptr;  // m + 1
  SpaceIn<Exec, Ordinal> col;
  SpaceIn<Exec, S> val;
  Ordinal m = 0, n = 0;
  Offset nnz = 0;
};
template <class Exec, class S>
struct CooArrays {
  SpaceIn<Exec, Ordinal> row, col;
  SpaceIn<Exec, S> val;
  Ordinal m = 0, n = 0;
  Offset nnz = 0;
};
template <class Exec, class S>
struct CscArrays {
  SpaceIn<Exec, Offset> col_ptr;  // n + 1
  SpaceIn<Exec, Ordinal> row;
  SpaceIn<Exec, S> val;
  Ordinal m = 0, n = 0;
  Offset nnz = 0;
};

// The device CSR kernel's vector length for a mean row length: a power of two in [1, min(32,
// Exec's maximum)], about a sixth of the mean row length.
template <class Exec>
int csr_vector_length(double mean_row_length) {
  const int max_length = std::min(32, Kokkos::TeamPolicy<Exec>::vector_length_max());
  int length = 1;
  while (length * 2 <= max_length && length * 6 < mean_row_length) length *= 2;
  return length;
}

namespace detail {

// Non-zeros one host work item should process: enough to amortize scheduling, small enough to
// balance.
constexpr double kNnzPerHostBlock = 4096;
// Threads (times vector lanes) of a device team.
constexpr int kDeviceTeamLanes = 256;

template <class Exec>
using CsrPolicy = Kokkos::TeamPolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>>;

// The host CSR kernel: a work item per block of rows_per_block rows, each row one plain loop with
// four independent partial sums (four gathers of x in flight, instruction-level parallelism that
// one dependent chain of additions would not give). Raw __restrict__ pointers let the compiler
// keep a row's state in registers; a team per block with a vector reduction per row (the device's
// shape) spent 4-8% more time on rows that read x at random (uniform, kron), none on stencils.
// BetaZero removes the beta test from the per-row epilogue. A functor, not a lambda: nvcc does not
// let an extended lambda first capture a variable inside `if constexpr`.
template <bool BetaZero, class S>
struct HostCsrKernel {
  S alpha, beta;
  const Offset* row_ptr;
  const Ordinal* col;
  const S* val;
  const S* x;
  S* y;
  Offset m, rows_per_block;

  KOKKOS_INLINE_FUNCTION void operator()(Offset block) const {
    const Offset* __restrict__ ptr = row_ptr;
    const Ordinal* __restrict__ c = col;
    const S* __restrict__ v = val;
    const S* __restrict__ xs = x;
    S* __restrict__ ys = y;
    // Rows counted in Offset: first + rows_per_block may pass 2^31 - 1 on the last block.
    const Offset first = block * rows_per_block;
    const Offset last = first + rows_per_block < m ? first + rows_per_block : m;
    for (Offset i = first; i < last; ++i) {
      Offset k = ptr[i];
      const Offset end = ptr[i + 1];
      Acc s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (; k + 4 <= end; k += 4) {
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

// The device CSR kernel: a team per block of rows_per_team rows (a row per thread), a vector
// reduction per row, neighbouring lanes reading neighbouring entries.
template <bool BetaZero, class Exec, class S>
struct CsrKernel {
  S alpha, beta;
  CsrArrays<Exec, S> a;
  SpaceIn<Exec, S> x;
  SpaceOut<Exec, S> y;
  Offset rows_per_team;

  KOKKOS_INLINE_FUNCTION void operator()(const typename CsrPolicy<Exec>::member_type& team) const {
    // Rows counted in Offset: first + rows_per_team may pass 2^31 - 1 on the last team.
    const Offset m = a.m, first = team.league_rank() * rows_per_team;
    const Offset last = first + rows_per_team < m ? first + rows_per_team : m;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, last), [&](Offset i) {
      const Offset begin = a.row_ptr(i), end = a.row_ptr(i + 1);
      Acc sum = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, end - begin),
          [&](Offset k, Acc& acc) { acc += Acc(a.val(begin + k)) * x(a.col(begin + k)); }, sum);
      Kokkos::single(Kokkos::PerThread(team), [&]() {
        const S ax = static_cast<S>(alpha * sum);
        if constexpr (BetaZero)
          y(i) = ax;
        else
          y(i) = ax + beta * y(i);
      });
    });
  }
};

template <bool BetaZero, class Exec, class S>
void csr_spmv(const Exec& exec, S alpha, const CsrArrays<Exec, S>& a, const S* x, S beta, S* y) {
  const double mean = double(a.nnz) / a.m;
  if constexpr (kOnHost<Exec>) {
    const auto rows_per_block =
        static_cast<Offset>(std::clamp(kNnzPerHostBlock / std::max(mean, 1.0), 1.0, double(a.m)));
    const HostCsrKernel<BetaZero, S> kernel{
        alpha, beta, a.row_ptr.data(), a.col.data(), a.val.data(), x, y, a.m, rows_per_block};
    using Policy =
        Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<Offset>>;
    Kokkos::parallel_for("kspmv::csr", Policy(exec, 0, (a.m + rows_per_block - 1) / rows_per_block),
                         kernel);
  } else {  // one row per thread (a vector of lanes)
    const int lanes = csr_vector_length<Exec>(mean);
    CsrKernel<BetaZero, Exec, S> kernel{
        alpha, beta, a, SpaceIn<Exec, S>(x, a.n), SpaceOut<Exec, S>(y, a.m), 1};
    const int most =
        CsrPolicy<Exec>(exec, 1, 1, lanes).team_size_max(kernel, Kokkos::ParallelForTag());
    const int team_size = std::max(1, std::min(kDeviceTeamLanes / lanes, most));
    kernel.rows_per_team = team_size;
    const auto league = static_cast<int>((a.m + team_size - 1) / team_size);
    Kokkos::parallel_for("kspmv::csr", CsrPolicy<Exec>(exec, league, team_size, lanes), kernel);
  }
}

// y = alpha*t + beta*y where t = A*x is scatter-added by `body(u, acc)` for `count` independent
// units u (entries or columns) into `work` through the access object acc. The scatter is
// non-atomic on Serial, duplicated or atomic on threaded host spaces and atomic on devices
// (ScatterView picks). Body is a functor at namespace scope: nvcc does not let a lambda's type
// reach the template arguments of a function that launches an extended lambda.
template <class Exec, class S, class Body>
void scatter_spmv(const Exec& exec, const char* label, S alpha, Ordinal m, S beta, S* y_ptr,
                  Offset count, const Body& body, const ScatterWork<Exec>& work) {
  Kokkos::deep_copy(exec, work, Acc(0));
  auto scatter = Kokkos::Experimental::create_scatter_view(work);
  using Policy =
      Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<Offset>>;
  Kokkos::parallel_for(
      label, Policy(exec, 0, count), KOKKOS_LAMBDA(Offset u) {
        auto acc = scatter.access();
        body(u, acc);
      });
  ScatterWork<Exec> t = work;
  Kokkos::Experimental::contribute(t, scatter);
  const SpaceOut<Exec, S> y(y_ptr, m);
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<Exec>(exec, 0, m), KOKKOS_LAMBDA(Ordinal i) {
        const S at = static_cast<S>(alpha * t(i));
        y(i) = beta == S(0) ? at : at + beta * y(i);
      });
}

// COO scatter unit: entry k adds its product to its row.
template <class Exec, class S>
struct CooProducts {
  CooArrays<Exec, S> a;
  SpaceIn<Exec, S> x;

  template <class Access>
  KOKKOS_INLINE_FUNCTION void operator()(Offset k, Access& acc) const {
    acc(a.row(k)) += Acc(a.val(k)) * x(a.col(k));
  }
};

// CSC scatter unit: column j adds val * x(j) to the rows of its entries.
template <class Exec, class S>
struct CscProducts {
  CscArrays<Exec, S> a;
  SpaceIn<Exec, S> x;

  template <class Access>
  KOKKOS_INLINE_FUNCTION void operator()(Offset j, Access& acc) const {
    const Acc xj = x(j);
    for (Offset k = a.col_ptr(j); k < a.col_ptr(j + 1); ++k) acc(a.row(k)) += a.val(k) * xj;
  }
};

}  // namespace detail

// y = beta*y on m entries, with y = 0 (not beta*NaN) when beta == 0.
template <class Exec, class S>
void scale(const Exec& exec, S beta, Ordinal m, S* y_ptr) {
  const SpaceOut<Exec, S> y(y_ptr, m);
  Kokkos::parallel_for(
      "kspmv::scale", Kokkos::RangePolicy<Exec>(exec, 0, m),
      KOKKOS_LAMBDA(Ordinal i) { y(i) = beta == S(0) ? S(0) : beta * y(i); });
}

template <class Exec, class S>
void spmv(const Exec& exec, S alpha, const CsrArrays<Exec, S>& a, const S* x, S beta, S* y) {
  if (a.m == 0) return;
  if (alpha == S(0) || a.nnz == 0) return scale(exec, beta, a.m, y);
  if (beta == S(0))
    detail::csr_spmv<true>(exec, alpha, a, x, beta, y);
  else
    detail::csr_spmv<false>(exec, alpha, a, x, beta, y);
}

// `work`: a.m entries in Exec's memory, overwritten.
template <class Exec, class S>
void spmv(const Exec& exec, S alpha, const CooArrays<Exec, S>& a, const S* x, S beta, S* y,
          const ScatterWork<Exec>& work) {
  if (a.m == 0) return;
  if (alpha == S(0) || a.nnz == 0) return scale(exec, beta, a.m, y);
  const detail::CooProducts<Exec, S> products{a, SpaceIn<Exec, S>(x, a.n)};
  detail::scatter_spmv(exec, "kspmv::coo", alpha, a.m, beta, y, a.nnz, products, work);
}

// Parallel over columns, scatter-adding as the COO kernel does.
template <class Exec, class S>
void spmv(const Exec& exec, S alpha, const CscArrays<Exec, S>& a, const S* x, S beta, S* y,
          const ScatterWork<Exec>& work) {
  if (a.m == 0) return;
  if (alpha == S(0) || a.nnz == 0) return scale(exec, beta, a.m, y);
  const detail::CscProducts<Exec, S> products{a, SpaceIn<Exec, S>(x, a.n)};
  detail::scatter_spmv(exec, "kspmv::csc", alpha, a.m, beta, y, Offset(a.n), products, work);
}

}  // namespace kspmv::host

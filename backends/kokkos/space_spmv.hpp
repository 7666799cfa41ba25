// The portable Kokkos SpMV kernels, on any execution space Exec: CSR with a work item per block of
// rows on the host and a team of vector lanes per block of rows on a device, COO and CSC by
// scatter-adding products. The arrays, x and y live in the memory of Exec. The host backend runs
// them on the default host execution space (spmv.hpp), the kokkos-default backend on Kokkos'
// default execution space, a GPU with a CUDA Kokkos (default_space_operator.hpp). Semantics are
// cuSPARSE's: beta == 0 overwrites y (NaN included); alpha == 0 leaves A unread. Sums are kept in
// double for both scalars (complex<double> for complex values): a float row of 10^5 entries summed
// in float would already miss the 1e-5 relative accuracy the tests (and users of float CG) expect.
// Each call is enqueued on `exec` and returns without waiting for it. On a device, rows longer than
// kLongRow are summed by a second kernel in chunks of kChunk entries (a RowChunks plan per pattern)
// added atomically into y: their last bits then depend on the order of the chunks.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>
#include <algorithm>

#include "kspmv/core/complex.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv::host {

using Acc = double;
// The sums of the CSR kernels on values of type S: double, Kokkos::complex<double> for complex S.
template <class S>
using AccOf = std::conditional_t<is_complex_v<S>, Kokkos::complex<double>, Acc>;

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

// Rows longer than kLongRow entries are not reduced by the vector of one thread on a device: its
// <= 32 lanes would need >= 32 passes (4 per lane of a whole team), twice what a team of 256
// lanes needs for a chunk of kChunk.
constexpr Offset kLongRow = 1024;
// Entries of a long row one team sums (16 per lane of a 256-lane team).
constexpr Offset kChunk = 4096;

// The long rows of a CSR pattern cut into chunks for the device kernel: chunk c sums the entries
// [first(c), min(first(c) + kChunk, row_ptr(row(c) + 1))) of row row(c). Empty when no row has
// more than kLongRow entries. Built once per pattern by plan_row_chunks, in Exec's memory.
template <class Exec>
struct RowChunks {
  Kokkos::View<Ordinal*, typename Exec::memory_space> row;
  Kokkos::View<Offset*, typename Exec::memory_space> first;
  Offset count = 0;
};

namespace detail {

// Scan over the rows: the chunks of row i start at the sum of the counts of the rows before it;
// they are written where the Views are allocated (the second pass).
template <class Exec>
struct ChunkRows {
  SpaceIn<Exec, Offset> row_ptr;
  RowChunks<Exec> chunks;

  KOKKOS_INLINE_FUNCTION void operator()(Offset i, Offset& next, bool final) const {
    const Offset begin = row_ptr(i), length = row_ptr(i + 1) - begin;
    if (length <= kLongRow) return;
    const Offset count = (length + kChunk - 1) / kChunk;
    if (final && chunks.row.extent(0) > 0)
      for (Offset j = 0; j < count; ++j)
        chunks.row(next + j) = static_cast<Ordinal>(i), chunks.first(next + j) = begin + j * kChunk;
    next += count;
  }
};

}  // namespace detail

// The chunks of the long rows of `a`'s pattern, built in Exec's memory by two scans over the rows
// (the chunk count is the one value read back). 12 bytes a chunk; empty when no row is long.
template <class Exec, class S>
RowChunks<Exec> plan_row_chunks(const Exec& exec, const CsrArrays<Exec, S>& a) {
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<Offset>>;
  detail::ChunkRows<Exec> scan{a.row_ptr, {}};
  Kokkos::parallel_scan("kspmv::csr::count_chunks", Policy(exec, 0, a.m), scan, scan.chunks.count);
  if (scan.chunks.count == 0) return {};
  using Memory = typename Exec::memory_space;
  const auto n = static_cast<std::size_t>(scan.chunks.count);
  scan.chunks.row = Kokkos::View<Ordinal*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kspmv::chunk_row"), n);
  scan.chunks.first = Kokkos::View<Offset*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kspmv::chunk_first"), n);
  Kokkos::parallel_scan("kspmv::csr::plan_chunks", Policy(exec, 0, a.m), scan);
  exec.fence();
  return scan.chunks;
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
      using A = AccOf<S>;
      A s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (; k + 4 <= end; k += 4) {
        s0 += A(v[k]) * A(xs[c[k]]);
        s1 += A(v[k + 1]) * A(xs[c[k + 1]]);
        s2 += A(v[k + 2]) * A(xs[c[k + 2]]);
        s3 += A(v[k + 3]) * A(xs[c[k + 3]]);
      }
      for (; k < end; ++k) s0 += A(v[k]) * A(xs[c[k]]);
      const S ax = static_cast<S>(A(alpha) * ((s0 + s1) + (s2 + s3)));
      if constexpr (BetaZero)
        ys[i] = ax;
      else
        ys[i] = ax + beta * ys[i];
    }
  }
};

// The device CSR kernel: a team per block of rows_per_team rows (a row per thread), a vector
// reduction per row, neighbouring lanes reading neighbouring entries. A row longer than long_row
// only gets beta*y (0 when BetaZero): ChunkKernel adds its products afterwards.
template <bool BetaZero, class Exec, class S>
struct CsrKernel {
  S alpha, beta;
  CsrArrays<Exec, S> a;
  SpaceIn<Exec, S> x;
  SpaceOut<Exec, S> y;
  Offset rows_per_team, long_row;

  KOKKOS_INLINE_FUNCTION void operator()(const typename CsrPolicy<Exec>::member_type& team) const {
    // Rows counted in Offset: first + rows_per_team may pass 2^31 - 1 on the last team.
    const Offset m = a.m, first = team.league_rank() * rows_per_team;
    const Offset last = first + rows_per_team < m ? first + rows_per_team : m;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, last), [&](Offset i) {
      const Offset begin = a.row_ptr(i), end = a.row_ptr(i + 1);
      const bool split = end - begin > long_row;
      using A = AccOf<S>;
      A sum = 0;
      if (!split)
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, end - begin),
            [&](Offset k, A& acc) { acc += A(a.val(begin + k)) * A(x(a.col(begin + k))); }, sum);
      Kokkos::single(Kokkos::PerThread(team), [&]() {
        const S ax = split ? S(0) : static_cast<S>(A(alpha) * sum);
        if constexpr (BetaZero)
          y(i) = ax;
        else
          y(i) = ax + beta * y(i);
      });
    });
  }
};

// The long rows' second kernel: a team per chunk, its sum reduced over all the team's lanes and
// alpha times it added atomically to the row's y.
template <class Exec, class S>
struct ChunkKernel {
  S alpha;
  CsrArrays<Exec, S> a;
  RowChunks<Exec> chunks;
  SpaceIn<Exec, S> x;
  SpaceOut<Exec, S> y;

  KOKKOS_INLINE_FUNCTION void operator()(const typename CsrPolicy<Exec>::member_type& team) const {
    const Ordinal i = chunks.row(team.league_rank());
    const Offset begin = chunks.first(team.league_rank()), row_end = a.row_ptr(i + 1);
    const Offset end = begin + kChunk < row_end ? begin + kChunk : row_end;
    using A = AccOf<S>;
    A sum = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamVectorRange(team, begin, end),
        [&](Offset k, A& acc) { acc += A(a.val(k)) * A(x(a.col(k))); }, sum);
    Kokkos::single(Kokkos::PerTeam(team),
                   [&]() { Kokkos::atomic_add(&y(i), static_cast<S>(A(alpha) * sum)); });
  }
};

// The device's CSR kernel (a team of vectors per block of rows, the long rows in `chunks` split):
// what csr_spmv runs on a device; the tests run it on host spaces too.
template <bool BetaZero, class Exec, class S>
void team_csr_spmv(const Exec& exec, S alpha, const CsrArrays<Exec, S>& a,
                   const RowChunks<Exec>& chunks, const S* x, S beta, S* y) {
  const int lanes = csr_vector_length<Exec>(double(a.nnz) / a.m);
  const SpaceIn<Exec, S> xs(x, a.n);
  const SpaceOut<Exec, S> ys(y, a.m);
  const Offset long_row = chunks.count > 0 ? kLongRow : a.nnz;  // no row is longer than nnz
  CsrKernel<BetaZero, Exec, S> kernel{alpha, beta, a, xs, ys, 1, long_row};
  const int most =
      CsrPolicy<Exec>(exec, 1, 1, lanes).team_size_max(kernel, Kokkos::ParallelForTag());
  const int team_size = std::max(1, std::min(kDeviceTeamLanes / lanes, most));
  kernel.rows_per_team = team_size;
  const auto league = static_cast<int>((a.m + team_size - 1) / team_size);
  Kokkos::parallel_for("kspmv::csr", CsrPolicy<Exec>(exec, league, team_size, lanes), kernel);
  if (chunks.count == 0) return;
  // After the first kernel on the same instance: the long rows' y already holds beta*y.
  const ChunkKernel<Exec, S> chunk_kernel{alpha, a, chunks, xs, ys};
  const int chunk_lanes = std::min(32, Kokkos::TeamPolicy<Exec>::vector_length_max());
  const int chunk_most = CsrPolicy<Exec>(exec, 1, 1, chunk_lanes)
                             .team_size_max(chunk_kernel, Kokkos::ParallelForTag());
  // On a host space (the tests), teams of one thread: chunks of one row then add at once.
  const int chunk_team =
      kOnHost<Exec> ? 1 : std::max(1, std::min(kDeviceTeamLanes / chunk_lanes, chunk_most));
  Kokkos::parallel_for(
      "kspmv::csr::long_rows",
      CsrPolicy<Exec>(exec, static_cast<int>(chunks.count), chunk_team, chunk_lanes), chunk_kernel);
}

template <bool BetaZero, bool Team, class Exec, class S>
void csr_spmv(const Exec& exec, S alpha, const CsrArrays<Exec, S>& a, const RowChunks<Exec>& chunks,
              const S* x, S beta, S* y) {
  if constexpr (!Team) {
    const double mean = double(a.nnz) / a.m;
    const auto rows_per_block =
        static_cast<Offset>(std::clamp(kNnzPerHostBlock / std::max(mean, 1.0), 1.0, double(a.m)));
    const HostCsrKernel<BetaZero, S> kernel{
        alpha, beta, a.row_ptr.data(), a.col.data(), a.val.data(), x, y, a.m, rows_per_block};
    using Policy =
        Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<Offset>>;
    Kokkos::parallel_for("kspmv::csr", Policy(exec, 0, (a.m + rows_per_block - 1) / rows_per_block),
                         kernel);
  } else {  // one row per thread (a vector of lanes), long rows in chunks
    team_csr_spmv<BetaZero>(exec, alpha, a, chunks, x, beta, y);
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

// Team: the device's kernel (a team of vectors per block of rows, the long rows of `chunks`, the
// plan_row_chunks of a's pattern, split), else the host's row loop. Kernels as Exec runs them by
// default; the tests also run the device's on host spaces.
template <class Exec, class S, bool Team = !kOnHost<Exec>>
void spmv(const Exec& exec, S alpha, const CsrArrays<Exec, S>& a, const S* x, S beta, S* y,
          const RowChunks<Exec>& chunks = {}) {
  if (a.m == 0) return;
  if (alpha == S(0) || a.nnz == 0) return scale(exec, beta, a.m, y);
  if (beta == S(0))
    detail::csr_spmv<true, Team>(exec, alpha, a, chunks, x, beta, y);
  else
    detail::csr_spmv<false, Team>(exec, alpha, a, chunks, x, beta, y);
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

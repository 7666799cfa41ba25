// Entry points of the CUDA backend. Kokkos-free: the matrix arrives as host pointers.
#pragma once

#include <limits>
#include <memory>

#include "backends/cuda/device_spmv.hpp"
#include "kspmv/core/operator_impl.hpp"

namespace kspmv::cuda {

// Number of CUDA devices present (0 when the driver finds none; never throws).
int device_count();

// Builds the CUDA execution of options.kernel on options.devices[0] (InvalidArgument for a
// device id that does not exist). Residency::Resident: the matrix is uploaded once and
// apply_host copies x in (and y when beta != 0) and y out; apply_device works on vectors in the
// device's memory, ordered after work on the legacy default stream, and returns when y is
// written. Residency::Streamed or Kernel::FullOverlap: the matrix stays on the host and is
// streamed on every apply (CSR-Full-Overlap; Streamed with another explicit kernel:
// UnsupportedError).
//
// Kernel::Auto, options.autotune == false: auto_kernel() below, decided once from row_ptr.
// Kernel::Auto, options.autotune == true: every available resident kernel (csr-vector,
// cusparse, cusparse-alg2, partial-overlap, seg, seg-r) runs kAutotuneTrials applies each, in
// turn, on the caller's first calls (each result is a correct SpMV); each is timed with events
// and the one with the smallest time is kept, the others are freed. kernel() names the kernel of
// the last apply. Explicit kernels ignore autotune.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrPointers<Scalar>& host_matrix,
                                                    const Options& options);

inline constexpr int kAutotuneTrials = 3;

// Whether this build runs `kernel` on CUDA devices (Auto always; others once their family is in).
bool kernel_available(Kernel kernel);

// What Kernel::Auto (and CSR-Vector's lane count) reads of a matrix: row-length statistics from
// row_ptr alone, over the rows of at most `max_len` non-zeros (all rows by default).
struct RowShape {
  Offset nnz = 0;
  Offset max = 0;    // longest row
  double mean = 0;   // nnz / rows
  double cv = 0;     // coefficient of variation stddev / mean (0 when mean == 0)
  Ordinal rows = 0;  // the rows counted
};
RowShape row_shape(const Offset* row_ptr, Ordinal m,
                   Offset max_len = std::numeric_limits<Offset>::max());

// Below this many non-zeros an SpMV takes a few microseconds and launch latency decides; above
// it, memory bandwidth does.
inline constexpr Offset kAutoLatencyNnz = Offset(1) << 21;

// The Kernel::Auto rule (no timing), from the RowShape and the bytes of one value (4 or 8).
// "Skewed": max > 8 * mean + 32.
//   no non-zeros                                        -> csr-vector
//   nnz < kAutoLatencyNnz (latency-bound):
//     skewed or power law (cv > 1)                      -> seg (balanced tiles, one pass)
//     otherwise                                         -> csr-vector (one light kernel, lanes
//                                                          by csr_vector_lanes)
//   nnz >= kAutoLatencyNnz (bandwidth-bound):
//     skewed or power law (cv > 1)                      -> cusparse
//     short rows (mean < 6, cv < 0.5)                   -> csr-vector
//     float, otherwise                                  -> cusparse (csr-vector measured 0.83x on
//                                                          the geometric graph, 0.95x on the
//                                                          27-point stencil)
//     double, near-equal rows of up to 12 entries       -> seg (coalesced tiles, no padding; the
//     (cv < 0.2; the uniform random family)                uniform random family)
//     double, otherwise                                 -> csr-vector
// Calibrated on perf_tests/spmv_bench (H100, see perf_tests/README.md): where no kspmv kernel
// measured faster than cuSPARSE, the rule keeps cuSPARSE. A choice whose family is not built
// falls back to cusparse. Options::autotune times the candidates instead.
Kernel auto_kernel(const RowShape& shape, std::size_t value_bytes);

// A kernel bound to one matrix on the current device: csr-vector, cusparse, cusparse-alg2 and
// partial-overlap use the uploaded matrix `a`; seg, seg-r and full-overlap build their own device
// data from `host` (full-overlap streams it from pinned host memory on every run; `a` may be
// null for those three). UnsupportedError for Auto, host kernels and families not built.
template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_device_spmv(Kernel kernel,
                                                     std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                     const CsrPointers<Scalar>& host);
// Whether make_device_spmv reads the column indices and values of `host` (seg, seg-r,
// full-overlap, and hbp for its hash sampling); the other kernels read its row pointer only.
bool reads_host_entries(Kernel kernel);

}  // namespace kspmv::cuda

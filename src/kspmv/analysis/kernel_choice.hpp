// Decisions made from row statistics alone, testable without a GPU: the Kernel::Auto rule of the
// CUDA backend and CSR-Vector's lanes per row.
#pragma once

#include <cstddef>

#include "kspmv/analysis/row_stats.hpp"
#include "kspmv/core/options.hpp"

namespace kspmv::analysis {

// Below this many non-zeros an SpMV takes a few microseconds and launch latency decides; above
// it, memory bandwidth does.
inline constexpr Offset kAutoLatencyNnz = Offset(1) << 21;

// The Kernel::Auto rule of the CUDA backend (no timing), from the row statistics and the bytes
// of one value (4 or 8; 8 and more take the double rows). "Skewed": max > 8 * mean + 32.
//   no non-zeros                                        -> csr-vector
//   nnz < kAutoLatencyNnz (launch-bound: the host's enqueueing decides, about 4 us a launch)
//                                                       -> csr-vector (one light launch, its long
//                                                          rows' chunks in the same launch: 4-6 us
//                                                          a call, seg and cuSPARSE 8-10; on
//                                                          bcsstk38, skewed, seg was 0.54x)
//   nnz >= kAutoLatencyNnz (bandwidth-bound):
//     skewed or power law (cv > 1), float               -> cusparse (seg 0.91x on FullChip-like)
//     skewed or power law (cv > 1), double              -> seg (FullChip-like 1.03x cuSPARSE on
//                                                          the H100 and the H200, kron 0.99x)
//     short rows (mean < 6, cv < 0.5)                   -> csr-vector
//     near-equal rows of up to 16 entries (cv < 0.2;    -> seg (coalesced tiles, no padding:
//     the uniform random family)                           1.02-1.08x cuSPARSE, float and double;
//                                                          csr-vector 0.88-0.98x)
//     float, uneven rows (cv >= 0.2)                    -> cusparse (csr-vector 0.93x on the
//                                                          geometric graph)
//     otherwise                                         -> csr-vector (27-point stencil: 1.18x
//                                                          double, 1.10x float on the H200)
// Calibrated on perf_tests/spmv_bench (an H100, then an H200 with each timed call after an
// untimed one of itself; perf_tests/README.md): where no kspmv kernel measured faster than
// cuSPARSE, the rule keeps cuSPARSE. Options::autotune times the candidates instead.
Kernel auto_kernel(const RowStats& s, std::size_t value_bytes);

// CSR-Vector's lanes per row from the mean and coefficient of variation of the row lengths and
// the row count (measured with spmv_bench --vector-sizes on an H100; paper 4's Table 2 is for its
// shared-memory batches, where 2 lanes on 27-entry rows reached only 60% of copy bandwidth):
// - at least 2^18 rows of at most 6 near-equal entries (cv < 0.2): 1, each thread streams its
//   contiguous row (the 5-point Laplacian: 100% of copy; 4 lanes: 75%);
// - otherwise 4: a warp's loads span 8 neighbouring rows, which stay in L1 (27-point stencil
//   86% of copy; random geometric graph 1.75x faster than 1 lane);
// - fewer rows (latency-bound): doubled while rows * lanes < 2^18, up to the mean rounded up
//   to a power of two (at most 32);
// - and doubled (up to 32) until a lane reads at most 8 entries of its row: a banded matrix of
//   129 entries per row and 1.7e7 rows reached 68% of copy bandwidth on 4 lanes, 83% on 8, 95%
//   on 16, 97% on 32 (64- and 32-bit offsets alike).
int csr_vector_lanes(double mean, double cv, Ordinal rows);

// The rows CSR-Vector of `lanes` lanes a row leaves to its long-row path (chunks of the same
// launch): those of more than 128 entries a lane, beyond which one row's group is the kernel's
// tail.
inline Offset csr_vector_long_row_threshold(int lanes) {
  return Offset{128} * lanes;
}

}  // namespace kspmv::analysis

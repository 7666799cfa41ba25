// The Kernel::Auto rule and CSR-Vector's lane policy (kernel_choice.hpp).
#include "kspmv/analysis/kernel_choice.hpp"

namespace kspmv::analysis {

Kernel auto_kernel(const RowStats& s, std::size_t value_bytes) {
  if (s.nnz == 0) return Kernel::CsrVector;
  const double cv = s.cv();
  if (s.nnz < kAutoLatencyNnz) return Kernel::CsrVector;
  const bool skewed = s.max_row > 8 * s.mean_row + 32;  // a few rows far longer than the rest
  if (skewed || cv > 1) return value_bytes < 8 ? Kernel::Cusparse : Kernel::Seg;
  if (s.mean_row < 6 && cv < 0.5) return Kernel::CsrVector;
  if (cv < 0.2 && s.mean_row <= 16) return Kernel::Seg;
  if (value_bytes < 8 && cv >= 0.2) return Kernel::Cusparse;
  return Kernel::CsrVector;
}

int csr_vector_lanes(double mean, double cv, Ordinal rows) {
  constexpr long long kThreads = 1 << 18;  // enough rows in flight to cover the latency
  if (rows >= kThreads && mean <= 6 && cv < 0.2) return 1;
  int cap = 4;  // the mean rounded up to a power of two, 4..32
  while (cap < 32 && cap < mean) cap *= 2;
  int lanes = 4;
  while (lanes < cap && static_cast<long long>(rows) * lanes < kThreads) lanes *= 2;
  while (lanes < 32 && lanes * 8 < mean) lanes *= 2;  // at most 8 entries of a row per lane
  return lanes;
}

}  // namespace kspmv::analysis

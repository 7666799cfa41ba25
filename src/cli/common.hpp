// What the tool's commands share: loading a matrix from a file or a generator spec, checking an
// Operator against the reference, timing it, and the effective-bandwidth model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/options.hpp"
#include "kspmv/formats/csr.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "kspmv/operator.hpp"

namespace kspmv::cli {

// "gen:SPEC" generates the matrix; anything else is a Matrix Market file (.mtx or .mtx.gz; "-"
// is standard input). Progress goes to stderr only when stderr is a terminal; the reader's
// warnings always do. A file with NaN, infinite values or values that overflow Scalar is refused
// (InvalidArgument naming the first such line) unless allow_nonfinite.
template <class Scalar>
CsrMatrix<Scalar> load_matrix(const std::string& source, bool allow_nonfinite = false);

// The reader's warnings about `source`, one "kspmv: warning:" line each on stderr.
void print_warnings(const std::string& source, const io::ReadReport& report);

// "--devices": a comma-separated list of device ids such as 0,1 or "all" ({kAllDevices}).
// Throws UsageError for anything else.
std::vector<int> parse_devices(const std::string& list);
inline const char* kDevicesHelp =
    "device ids, comma-separated, or all (default 0); several: the matrix is partitioned over "
    "them (the host backend emulates that many devices)";

inline const char* kPartitionHelp =
    "multi-device partition: rows, nz, 2nz, lra, lra-rc, pcsr, pcsc (host), pcoo (default nz)";
inline const char* kExchangeHelp =
    "multi-device exchange: auto, allgather, merge, halo (default auto)";

// True when stderr is a terminal (progress lines are shown only then).
bool stderr_is_terminal();

// Runs op.apply once on fresh random x (and random y when beta != 0, NaN-poisoned y when
// beta == 0) and returns the relative l2 error against reference::spmv.
template <class Scalar>
double check(Operator<Scalar>& op, const CsrMatrix<Scalar>& a, Scalar alpha, Scalar beta,
             std::uint64_t seed);

struct Timing {
  double ms = 0;        // median time of one SpMV (see measured_ms)
  double apply_ms = 0;  // median time of the whole apply (transfers of x and y included)
  int runs = 0;
};

// Median over `runs` applies on random vectors; y is reset between runs outside the timing.
// The time of one SpMV is the kernel time, or the whole apply when the matrix is streamed
// (residency Streamed or kernel full-overlap: the matrix transfer is part of the SpMV).
template <class Scalar>
Timing time_applies(Operator<Scalar>& op, Scalar alpha, Scalar beta, int runs, std::uint64_t seed);

// Bytes an SpMV must move at least (DESIGN.md "Measuring").
template <class Scalar>
double effective_bytes(const CsrMatrix<Scalar>& a) {
  const double nnz = static_cast<double>(a.nnz());
  return nnz * (sizeof(Scalar) + 4) + (a.nrows + 1.0) * 4 +
         (static_cast<double>(a.ncols) + a.nrows) * sizeof(Scalar);
}

template <class Scalar>
const char* precision_name() {
  return sizeof(Scalar) == sizeof(float) ? "float" : "double";
}

}  // namespace kspmv::cli

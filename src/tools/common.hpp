// What the kspmv tool and the benchmarks share: loading a matrix from a file or a generator spec,
// random vectors, checking an Operator against the reference, timing, the effective-bandwidth
// model and the date of a result.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kspmv/core/options.hpp"
#include "kspmv/formats/csr.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "kspmv/operator.hpp"
#include "tools/args.hpp"

namespace kspmv::tools {

// True when stderr is a terminal (progress lines are shown only then).
bool stderr_is_terminal();

// "gen:SPEC" generates the matrix; anything else is a Matrix Market file (.mtx or .mtx.gz; "-"
// is standard input). With `progress`, stderr tells it (one line for a generator, the reader's for
// large files); the reader's warnings always go to stderr. A file with NaN, infinite values or
// values that overflow Scalar is refused (InvalidArgument naming the first such line) unless
// `allow_nonfinite`.
template <class Scalar>
CsrMatrix<Scalar> load_matrix(const std::string& source, bool progress = stderr_is_terminal(),
                              bool allow_nonfinite = false);

// The reader's warnings about `source`, one "kspmv: warning:" line each on stderr.
void print_warnings(const std::string& source, const io::ReadReport& report);

// The generated set of the benchmarks (spmv_bench's and multi_gpu_bench's default, the families
// of the scaling model): every family, large, or small when `quick`.
std::vector<std::string> family_specs(bool quick);

// "--devices": a comma-separated list of device ids such as 0,1 or "all" ({kAllDevices}).
// Throws UsageError for anything else.
std::vector<int> parse_devices(const std::string& list);

// "--device-memory-cap GB" of the tool and the benchmarks: Options::device_memory_limit in bytes
// (GB = 10^9 bytes; 0 when not given). Throws UsageError unless positive.
std::size_t device_memory_cap(const ParsedArgs& args);
extern const OptionSpec kDeviceMemoryCapOption;

// "--stripe-columns N" of the tool and the benchmarks: Options::stripe_columns (0 when not
// given). Throws UsageError unless in [0, 2^30].
Ordinal stripe_columns(const ParsedArgs& args);
extern const OptionSpec kStripeColumnsOption;

// "--NAME VALUE" as Scalar (`fallback` when not given). Throws UsageError naming the value when
// it overflows Scalar (1e300 in float): the run would be told as a wrong result otherwise.
template <class Scalar>
Scalar scalar_option(const ParsedArgs& args, const std::string& name, double fallback);

// `n` values uniform in [-1, 1) from a generator seeded with `seed`.
template <class Scalar>
std::vector<Scalar> random_values(std::size_t n, std::uint64_t seed) {
  std::vector<Scalar> v(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& e : v) e = static_cast<Scalar>(dist(rng));
  return v;
}

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

using Body = std::function<void()>;

// The median of `v` (NaN when empty).
double median(std::vector<double> v);

// Wall-clock milliseconds of one call of `body`.
double wall_ms(const Body& body);

// Median milliseconds of each body over `runs` rounds that time every body once, in turn, after
// `warm_up` untimed rounds: bodies compared this way see the same drift of clocks and bandwidth.
// `timed(body)` calls a body once and returns its milliseconds.
std::vector<double> interleaved_median_ms(
    const std::vector<Body>& bodies, int runs, int warm_up,
    const std::function<double(const Body&)>& timed = wall_ms);

// Median wall-clock milliseconds of `runs` calls of `body` after `warm_up` untimed ones.
inline double median_ms(const Body& body, int runs, int warm_up = 0) {
  return interleaved_median_ms({body}, runs, warm_up)[0];
}

// Wall-clock and process CPU seconds of one call of `body` (on a shared machine the CPU time is
// the steadier one).
struct Seconds {
  double wall, cpu;
};
Seconds seconds_of(const Body& body);

// The current UTC time in ISO 8601, e.g. 2026-11-23T10:00:00Z: the "date" of a result file.
std::string utc_date();

// Median over `runs` applies on random vectors; y is reset between runs outside the timing.
// The time of one SpMV is the kernel time, or the whole apply when the matrix is streamed
// (Operator::residency(): the matrix transfer is part of the SpMV).
template <class Scalar>
Timing time_applies(Operator<Scalar>& op, Scalar alpha, Scalar beta, int runs, std::uint64_t seed);

// Bytes an SpMV must move at least (docs/DESIGN.md "Measuring").
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

// The version of the Kokkos kspmv was built with, "4.6.1" (needs no initialized Kokkos).
std::string kokkos_version();

// The Kokkos this build runs on, as `kspmv demo` and `kspmv info` print it: its version
// ("4.6.1"), the host execution space of the host backend and its threads, and Kokkos' default
// execution space (the kokkos-default backend's).
struct KokkosBuild {
  std::string version, host_space, default_space;
  int host_threads = 0;
};
KokkosBuild kokkos_build();
// "Kokkos 4.6.1, host OpenMP with 2 threads, default OpenMP".
std::string to_string(const KokkosBuild& k);

// "--precision float|double|both" (default `fallback`): the precisions to run.
std::vector<std::string> precisions(const ParsedArgs& args, const std::string& fallback);

}  // namespace kspmv::tools

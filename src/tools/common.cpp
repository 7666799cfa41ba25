#include "tools/common.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>
#include <sstream>
#include <vector>

#include "kspmv/core/timer.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "testing/reference.hpp"
#include "tools/args.hpp"

namespace kspmv::tools {

namespace {

template <class Scalar>
HostView<Scalar> random_view(std::size_t n, std::uint64_t seed) {
  auto v = make_host_view<Scalar>("random", n);
  const auto values = random_values<Scalar>(n, seed);
  std::copy(values.begin(), values.end(), v.data());
  return v;
}

}  // namespace

std::vector<std::string> family_specs(bool quick) {
  if (quick)
    return {"laplace2d:n=512", "stencil27:n=40",   "uniform:rows=200000,k=8", "kron:scale=16",
            "rgg:scale=16",    "kmer:rows=500000", "fullchip:rows=100000"};
  return {"laplace2d:n=4096", "stencil27:n=160",    "uniform:rows=20000000,k=8", "kron:scale=21",
          "rgg:scale=23",     "kmer:rows=60000000", "fullchip:rows=3000000"};
}

std::vector<int> parse_devices(const std::string& list) {
  if (list == "all") return {kAllDevices};
  std::vector<int> devices;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    const long id = parse_integer(item, "--devices");
    if (id < 0 || id > std::numeric_limits<int>::max())
      throw UsageError("--devices: device ids are from 0 to " +
                       std::to_string(std::numeric_limits<int>::max()) + " (or all), got " + item);
    devices.push_back(static_cast<int>(id));
  }
  if (devices.empty()) throw UsageError("--devices: give a comma-separated list such as 0,1");
  return devices;
}

const OptionSpec kDeviceMemoryCapOption = {
    "device-memory-cap", "GB",
    "the most device memory kspmv may use (10^9 bytes), as on a smaller GPU: residency auto "
    "decides by it and a streamed matrix sizes its ring of buffers to it"};

const OptionSpec kStripeColumnsOption = {
    "stripe-columns", "N",
    "columns of a stripe for --reorder stripes or auto (default 0: a third of the L2)"};

Ordinal stripe_columns(const ParsedArgs& args) {
  return static_cast<Ordinal>(args.integer("stripe-columns", 0, 0, 1 << 30));
}

std::size_t device_memory_cap(const ParsedArgs& args) {
  if (!args.has("device-memory-cap")) return 0;
  const double gb = args.number("device-memory-cap", 0);
  if (!(gb > 0) || gb > 1e9)
    throw UsageError("--device-memory-cap: a positive number of GB, got " +
                     args.text("device-memory-cap", ""));
  return static_cast<std::size_t>(gb * 1e9);
}

template <class Scalar>
Scalar scalar_option(const ParsedArgs& args, const std::string& name, double fallback) {
  const double v = args.number(name, fallback);
  if (std::fabs(v) <= double(std::numeric_limits<Scalar>::max())) return static_cast<Scalar>(v);
  char largest[32];
  std::snprintf(largest, sizeof largest, "%.7g", double(std::numeric_limits<Scalar>::max()));
  throw UsageError("--" + name + " " + args.text(name, "") + " overflows " +
                   precision_name<Scalar>() + " (largest magnitude " + largest + ")");
}

std::vector<std::string> precisions(const ParsedArgs& args, const std::string& fallback) {
  const std::string p = args.choice("precision", fallback, {"float", "double", "both"});
  return p == "both" ? std::vector<std::string>{"float", "double"} : std::vector<std::string>{p};
}

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) == 1;
}

void print_warnings(const std::string& source, const io::ReadReport& report) {
  for (const auto& w : report.warnings)
    std::cerr << "kspmv: warning: " << source << ": " << w << '\n';
}

template <class Scalar>
CsrMatrix<Scalar> load_matrix(const std::string& source, bool progress, bool allow_nonfinite) {
  const std::string prefix = "gen:";
  if (source.compare(0, prefix.size(), prefix) != 0) {
    io::ReadOptions options;
    options.progress = progress;
    io::ReadReport report;
    auto a = io::read_matrix_market<Scalar>(source, options, &report);
    const io::ValueCount &nonfinite = report.nonfinite, &overflow = report.overflow;
    if (!allow_nonfinite && nonfinite.count + overflow.count > 0) {
      const long line = std::min(nonfinite.first_line > 0 ? nonfinite.first_line : LONG_MAX,
                                 overflow.first_line > 0 ? overflow.first_line : LONG_MAX);
      throw InvalidArgument(source + (line < LONG_MAX ? ":" + std::to_string(line) : "") +
                            ": the matrix holds values that are NaN or infinite (" +
                            std::to_string(nonfinite.count) + ") or overflow " +
                            precision_name<Scalar>() + " (" + std::to_string(overflow.count) +
                            "); --allow-nonfinite uses it anyway");
    }
    print_warnings(source, report);
    return a;
  }
  // On a terminal: "kspmv: generating SPEC: NN%" redrawn at most every 200 ms, then the time.
  const std::string what = "kspmv: generating " + source.substr(prefix.size());
  if (progress) std::cerr << what << " ..." << std::flush;
  const auto start = Clock::now();
  double shown_ms = 0;
  const auto show = [&](double fraction) {
    const double now = ms_since(start);
    if (now - shown_ms < 200) return;
    shown_ms = now;
    std::fprintf(stderr, "\r%s: %3.0f%%", what.c_str(), 100 * fraction);
    std::fflush(stderr);
  };
  auto a = progress ? gen::from_spec<Scalar>(source.substr(prefix.size()), {}, show)
                    : gen::from_spec<Scalar>(source.substr(prefix.size()));
  if (progress) std::cerr << "\r" << what << ": done (" << ms_since(start) / 1e3 << " s)\n";
  return a;
}

template <class Scalar>
double check(Operator<Scalar>& op, const CsrMatrix<Scalar>& a, Scalar alpha, Scalar beta,
             std::uint64_t seed) {
  const auto x = random_view<Scalar>(a.ncols, seed);
  auto y = random_view<Scalar>(a.nrows, seed + 1);
  if (beta == Scalar(0)) Kokkos::deep_copy(y, std::numeric_limits<Scalar>::quiet_NaN());
  auto expected = make_host_view<Scalar>("expected", a.nrows);
  Kokkos::deep_copy(expected, y);
  reference::spmv(alpha, a, x.data(), beta, expected.data());
  op.apply(alpha, x, beta, y);
  return reference::rel_l2_error(y.data(), expected.data(), a.nrows);
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double wall_ms(const Body& body) {
  const auto t0 = Clock::now();
  body();
  return ms_since(t0);
}

std::vector<double> interleaved_median_ms(const std::vector<Body>& bodies, int runs, int warm_up,
                                          const std::function<double(const Body&)>& timed) {
  for (int i = 0; i < warm_up; ++i)
    for (const auto& body : bodies) body();
  std::vector<std::vector<double>> ms(bodies.size());
  for (int i = 0; i < runs; ++i)
    for (std::size_t b = 0; b < bodies.size(); ++b) ms[b].push_back(timed(bodies[b]));
  std::vector<double> medians;
  for (auto& m : ms) medians.push_back(median(m));
  return medians;
}

Seconds seconds_of(const Body& body) {
  const std::clock_t c0 = std::clock();
  const double wall = wall_ms(body) / 1e3;
  return {wall, double(std::clock() - c0) / CLOCKS_PER_SEC};
}

std::string utc_date() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

std::string kokkos_version() {
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
         "." + std::to_string(KOKKOS_VERSION % 100);
}

KokkosBuild kokkos_build() {
  KokkosBuild k;
  k.version = kokkos_version();
  k.host_space = execution_space_name(Backend::Host);
  k.host_threads = HostExecSpace().concurrency();
  k.default_space = execution_space_name(Backend::KokkosDefault);
  return k;
}

std::string to_string(const KokkosBuild& k) {
  return "Kokkos " + k.version + ", host " + k.host_space + " with " +
         std::to_string(k.host_threads) + " thread(s), default " + k.default_space;
}

template <class Scalar>
Timing time_applies(Operator<Scalar>& op, Scalar alpha, Scalar beta, int runs, std::uint64_t seed) {
  const auto x = random_view<Scalar>(op.ncols(), seed);
  const auto y0 = random_view<Scalar>(op.nrows(), seed + 1);
  auto y = make_host_view<Scalar>("y", op.nrows());
  const bool whole_apply = op.residency() == Residency::Streamed;
  std::vector<double> spmv_ms, apply_ms;
  for (int r = 0; r < runs; ++r) {
    Kokkos::deep_copy(y, y0);
    op.apply(alpha, x, beta, y);
    const Timings t = op.timings();
    spmv_ms.push_back(whole_apply || t.kernel_ms <= 0 ? t.total_ms : t.kernel_ms);
    apply_ms.push_back(t.total_ms);
  }
  return {median(spmv_ms), median(apply_ms), runs};
}

template CsrMatrix<float> load_matrix<float>(const std::string&, bool, bool);
template CsrMatrix<double> load_matrix<double>(const std::string&, bool, bool);
template double check<float>(Operator<float>&, const CsrMatrix<float>&, float, float,
                             std::uint64_t);
template double check<double>(Operator<double>&, const CsrMatrix<double>&, double, double,
                              std::uint64_t);
template float scalar_option<float>(const ParsedArgs&, const std::string&, double);
template double scalar_option<double>(const ParsedArgs&, const std::string&, double);
template Timing time_applies<float>(Operator<float>&, float, float, int, std::uint64_t);
template Timing time_applies<double>(Operator<double>&, double, double, int, std::uint64_t);

}  // namespace kspmv::tools

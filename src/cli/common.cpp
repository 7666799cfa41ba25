#include "common.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "args.hpp"
#include "backends/host/reference.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"

namespace kspmv::cli {

namespace {

template <class Scalar>
HostView<Scalar> random_view(std::size_t n, std::mt19937_64& rng) {
  auto v = make_host_view<Scalar>("x", n);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) v(i) = static_cast<Scalar>(dist(rng));
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

std::vector<int> parse_devices(const std::string& list) {
  if (list == "all") return {kAllDevices};
  std::vector<int> devices;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ','))
    devices.push_back(static_cast<int>(parse_integer(item, "--devices")));
  if (devices.empty()) throw UsageError("--devices: give a comma-separated list such as 0,1");
  for (int d : devices)
    if (d < 0) throw UsageError("--devices: device ids are >= 0 (or all)");
  return devices;
}

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) == 1;
}

void print_warnings(const std::string& source, const io::ReadReport& report) {
  for (const auto& w : report.warnings)
    std::cerr << "kspmv: warning: " << source << ": " << w << '\n';
}

template <class Scalar>
CsrMatrix<Scalar> load_matrix(const std::string& source, bool allow_nonfinite) {
  const std::string prefix = "gen:";
  if (source.compare(0, prefix.size(), prefix) != 0) {
    io::ReadReport report;
    auto a = io::read_matrix_market<Scalar>(source, {}, &report);
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
  const bool show = stderr_is_terminal();
  if (show)
    std::cerr << "kspmv: generating " << source.substr(prefix.size()) << " ..." << std::flush;
  const auto start = std::chrono::steady_clock::now();
  auto a = gen::from_spec<Scalar>(source.substr(prefix.size()));
  if (show) {
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    std::cerr << " done (" << s.count() << " s)\n";
  }
  return a;
}

template <class Scalar>
double check(Operator<Scalar>& op, const CsrMatrix<Scalar>& a, Scalar alpha, Scalar beta,
             std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto x = random_view<Scalar>(a.ncols, rng);
  auto y = random_view<Scalar>(a.nrows, rng);
  if (beta == Scalar(0)) Kokkos::deep_copy(y, std::numeric_limits<Scalar>::quiet_NaN());
  auto expected = make_host_view<Scalar>("expected", a.nrows);
  Kokkos::deep_copy(expected, y);
  reference::spmv(alpha, a, x.data(), beta, expected.data());
  op.apply(alpha, x, beta, y);
  return reference::rel_l2_error(y.data(), expected.data(), a.nrows);
}

template <class Scalar>
Timing time_applies(Operator<Scalar>& op, Scalar alpha, Scalar beta, int runs, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto x = random_view<Scalar>(op.ncols(), rng);
  const auto y0 = random_view<Scalar>(op.nrows(), rng);
  auto y = make_host_view<Scalar>("y", op.nrows());
  const bool whole_apply =
      op.options().residency == Residency::Streamed || op.kernel() == Kernel::FullOverlap;
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

template CsrMatrix<float> load_matrix<float>(const std::string&, bool);
template CsrMatrix<double> load_matrix<double>(const std::string&, bool);
template double check<float>(Operator<float>&, const CsrMatrix<float>&, float, float,
                             std::uint64_t);
template double check<double>(Operator<double>&, const CsrMatrix<double>&, double, double,
                              std::uint64_t);
template Timing time_applies<float>(Operator<float>&, float, float, int, std::uint64_t);
template Timing time_applies<double>(Operator<double>&, double, double, int, std::uint64_t);

}  // namespace kspmv::cli

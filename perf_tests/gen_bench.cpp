// Times every matrix generator (and the row analysis of its output) at a target non-zero count.
//
//   gen_bench [--nnz N] [--small] [--family F]... [--spec SPEC]... [--float] [--json]
//
// --nnz N     target non-zeros per matrix (default 1e8); each family's size is chosen from it
// --small     same as --nnz 1e6 (a quick check)
// --family F  only this family (repeatable): laplace2d stencil7 stencil27 uniform kron rgg kmer
//             banded fullchip
// --spec S    time this exact spec instead of (or besides) the families (repeatable)
// --float     build float matrices (default double)
// --json      one JSON array instead of the table
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "kspmv/analysis/analyze.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"

namespace {

using kspmv::Offset;

// A spec of `family` with about `nnz` non-zeros (from each family's non-zeros per row).
std::string sized_spec(const std::string& family, double nnz) {
  auto i = [](double v) { return std::to_string(std::max<long long>(2, std::llround(v))); };
  auto log2_round = [](double v) {
    return std::to_string(std::clamp(int(std::lround(std::log2(v))), 1, 30));
  };
  if (family == "laplace2d") return "laplace2d:n=" + i(std::sqrt(nnz / 5));
  if (family == "stencil7") return "stencil7:n=" + i(std::cbrt(nnz / 7));
  if (family == "stencil27") return "stencil27:n=" + i(std::cbrt(nnz / 27));
  if (family == "uniform") return "uniform:rows=" + i(nnz / 8) + ",k=8";
  if (family == "kron") return "kron:scale=" + log2_round(nnz / 30) + ",ef=16";  // ~30 per row
  if (family == "rgg") {  // mean degree ~0.95 ln n: pick the scale closest in log
    int best = 1;
    for (int s = 1; s <= 30; ++s) {
      auto err = [&](int t) {
        return std::abs(std::log(std::ldexp(0.95 * t * std::log(2.0), t) / nnz));
      };
      if (err(s) < err(best)) best = s;
    }
    return "rgg:scale=" + std::to_string(best);
  }
  if (family == "kmer") return "kmer:rows=" + i(nnz / 2.1);
  if (family == "banded") return "banded:n=" + i(nnz / 33) + ",bw=16";
  if (family == "fullchip") return "fullchip:rows=" + i(nnz / 9);
  throw kspmv::InvalidArgument("unknown family '" + family + "'");
}

struct Result {
  std::string spec;
  kspmv::analysis::RowStats stats;
  double generate_s, generate_cpu_s, analyze_s;  // wall and process CPU seconds
};

template <class S>
Result run(const std::string& spec) {
  using clock = std::chrono::steady_clock;
  const std::clock_t c0 = std::clock();
  const auto t0 = clock::now();
  const auto a = kspmv::gen::from_spec<S>(spec);
  const auto t1 = clock::now();
  const std::clock_t c1 = std::clock();
  const auto stats = kspmv::analysis::analyze(a);
  const auto t2 = clock::now();
  return {spec, stats, std::chrono::duration<double>(t1 - t0).count(),
          double(c1 - c0) / CLOCKS_PER_SEC, std::chrono::duration<double>(t2 - t1).count()};
}

int bench(int argc, char** argv) {
  double nnz = 1e8;
  bool use_float = false, json = false;
  std::vector<std::string> families, specs;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) throw kspmv::InvalidArgument(arg + " needs a value");
      return argv[++k];
    };
    if (arg == "--nnz")
      nnz = std::stod(value());
    else if (arg == "--small")
      nnz = 1e6;
    else if (arg == "--family")
      families.push_back(value());
    else if (arg == "--spec")
      specs.push_back(value());
    else if (arg == "--float")
      use_float = true;
    else if (arg == "--json")
      json = true;
    else if (arg == "--help") {
      std::cout
          << "gen_bench [--nnz N] [--small] [--family F]... [--spec SPEC]... [--float] [--json]\n"
          << kspmv::gen::spec_help();
      return 0;
    } else {
      throw kspmv::InvalidArgument("unknown argument '" + arg + "' (try --help)");
    }
  }
  if (families.empty() && specs.empty())
    families = {"laplace2d", "stencil7", "stencil27", "uniform", "kron",
                "rgg",       "kmer",     "banded",    "fullchip"};
  for (const auto& f : families) specs.push_back(sized_spec(f, nnz));

  if (json)
    std::cout << "[\n";
  else
    std::printf("%-34s %11s %12s %8s %8s %8s %8s %9s\n", "spec", "rows", "nnz", "max_row", "R",
                "gen_s", "gen_cpu", "analyze_s");
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const Result r = use_float ? run<float>(specs[k]) : run<double>(specs[k]);
    const auto& s = r.stats;
    if (json) {
      const std::string rv = std::isnan(s.power_law_r) ? "null" : std::to_string(s.power_law_r);
      std::printf(
          "  {\"spec\": \"%s\", \"scalar\": \"%s\", \"rows\": %d, \"nnz\": %lld, "
          "\"max_row\": %lld, \"mean_row\": %.4f, \"R\": %s, \"generate_s\": %.4f, "
          "\"generate_cpu_s\": %.4f, \"analyze_s\": %.4f}%s\n",
          r.spec.c_str(), use_float ? "float" : "double", s.nrows, (long long)s.nnz,
          (long long)s.max_row, s.mean_row, rv.c_str(), r.generate_s, r.generate_cpu_s, r.analyze_s,
          k + 1 < specs.size() ? "," : "");
    } else {
      std::printf("%-34s %11d %12lld %8lld %8.3f %8.3f %8.3f %9.3f\n", r.spec.c_str(), s.nrows,
                  (long long)s.nnz, (long long)s.max_row, s.power_law_r, r.generate_s,
                  r.generate_cpu_s, r.analyze_s);
    }
    std::fflush(stdout);
  }
  if (json) std::cout << "]\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return bench(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "gen_bench: " << e.what() << "\n";
    return 2;
  }
}

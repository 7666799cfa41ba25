// Times every matrix generator (and the row analysis of its output) at a target non-zero count:
// seconds and non-zeros per second on host_threads() threads (options: gen_bench --help).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "kspmv/analysis/analyze.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/parallel.hpp"
#include "kspmv/gen/generators.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace {

using namespace kspmv::tools;

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
  Seconds generate;  // wall and process CPU seconds
  double analyze_s;
};

template <class S>
Result measure(const std::string& spec) {
  Result r{spec, {}, {}, 0};
  kspmv::CsrMatrix<S> a;
  r.generate = seconds_of([&] { a = kspmv::gen::from_spec<S>(spec); });
  r.analyze_s = seconds_of([&] { r.stats = kspmv::analysis::analyze(a); }).wall;
  return r;
}

int run(const ParsedArgs& in) {
  const double nnz = in.flag("small") ? 1e6 : in.number("nnz", 1e8);
  const bool use_float = in.flag("float"), json = in.flag("json");
  std::vector<std::string> families = in.all("family"), specs = in.all("spec");
  if (families.empty() && specs.empty())
    families = {"laplace2d", "stencil7", "stencil27", "uniform", "kron",
                "rgg",       "kmer",     "banded",    "fullchip"};
  for (const auto& f : families) specs.push_back(sized_spec(f, nnz));

  JsonWriter j(std::cout);
  const int threads = kspmv::host_threads();
  if (json) {
    begin_output(j).key("results").begin_array(true);
  } else {
    std::printf("generators on %d threads\n", threads);
    std::printf("%-34s %11s %12s %8s %8s %8s %8s %9s %9s\n", "spec", "rows", "nnz", "max_row", "R",
                "gen_s", "gen_cpu", "Mnnz/s", "analyze_s");
  }
  for (const auto& spec : specs) {
    const Result r = use_float ? measure<float>(spec) : measure<double>(spec);
    const auto& s = r.stats;
    const double nnz_per_s = double(s.nnz) / r.generate.wall;
    if (json) {
      j.value(Record{{"spec", r.spec},
                     {"scalar", use_float ? "float" : "double"},
                     {"rows", s.nrows},
                     {"nnz", s.nnz},
                     {"max_row", s.max_row},
                     {"mean_row", s.mean_row},
                     {"R", s.power_law_r},
                     {"generate_s", r.generate.wall},
                     {"generate_cpu_s", r.generate.cpu},
                     {"nnz_per_s", nnz_per_s},
                     {"threads", threads},
                     {"analyze_s", r.analyze_s}});
    } else {
      std::printf("%-34s %11d %12lld %8lld %8.3f %8.3f %8.3f %9.1f %9.3f\n", r.spec.c_str(),
                  s.nrows, (long long)s.nnz, (long long)s.max_row, s.power_law_r, r.generate.wall,
                  r.generate.cpu, nnz_per_s / 1e6, r.analyze_s);
    }
    std::cout << std::flush;
  }
  if (json) j.end_array().end_object();
  return 0;
}

Command command() {
  Command c;
  c.name = "gen_bench";
  c.program = "";
  c.description =
      "Times every matrix generator (and the row analysis of its output) at a target non-zero\n"
      "count: wall and process CPU seconds, non-zeros per second, on every core (KSPMV_THREADS\n"
      "lowers the thread count).";
  c.options = {
      {"nnz", "N",
       "target non-zeros per matrix (default 1e8); each family's size is chosen from it"},
      {"small", "", "same as --nnz 1e6 (a quick check)"},
      {"family", "F",
       "only this family (repeatable): laplace2d stencil7 stencil27 uniform kron rgg kmer banded "
       "fullchip"},
      {"spec", "SPEC", "time this exact spec instead of (or besides) the families (repeatable)"},
      {"float", "", "build float matrices (default double)"},
      {"json", "", "one JSON object (its \"results\": a row each) instead of the table"},
  };
  c.run = run;
  c.extra_help = kspmv::gen::spec_help;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

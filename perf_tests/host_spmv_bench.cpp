// kspmv's host CSR kernel against KokkosSparse::spmv on the same arrays and execution space.
//
//   host_spmv_bench [--matrix SPEC]... [--runs N] [--json]
//
// Matrices come from kspmv::gen::from_spec (default: a 2D Laplacian, uniform random with 8 per
// row, an R-MAT power-law graph, a band, and a circuit-like matrix with long rows). The two
// kernels run alternately after warm-up; the median of N runs is shown with the effective
// bandwidth (docs/DESIGN.md "Measuring") and the relative l2 error against the oracle.
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "backends/kokkos/spmv.hpp"
#include "kspmv/gen/generators.hpp"
#include "testing/reference.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::tools;

struct Result {
  std::string name;
  Ordinal rows;
  Offset nnz;
  double kspmv_ms, kk_ms, kspmv_err, kk_err;
  double gbytes;  // bytes of one SpMV, in GB
};

Result measure(const std::string& name, const CsrMatrix<double>& a, int runs) {
  // KokkosSparse matrix over copies of the same arrays; size_t offsets are an ETI type of
  // Kokkos Kernels 3.4 (so is int) and hold our 64-bit row pointers without narrowing.
  using Exec = Kokkos::DefaultHostExecutionSpace;
  using KKMatrix = KokkosSparse::CrsMatrix<double, int, Exec, void, std::size_t>;
  const Offset nnz = a.nnz();
  typename KKMatrix::row_map_type::non_const_type row_map("row_map", a.nrows + 1);
  typename KKMatrix::index_type::non_const_type entries("entries", nnz);
  typename KKMatrix::values_type values("values", nnz);
  for (Ordinal i = 0; i <= a.nrows; ++i) row_map(i) = static_cast<std::size_t>(a.row_ptr(i));
  Kokkos::deep_copy(entries, a.col_idx);
  Kokkos::deep_copy(values, a.values);
  const KKMatrix kk("A", a.nrows, a.ncols, nnz, values, row_map, entries);

  Kokkos::View<double*, Kokkos::HostSpace> x("x", a.ncols), y_ours("y", a.nrows),
      y_kk("y_kk", a.nrows);
  const std::vector<double> random_x = random_values<double>(a.ncols, 42);
  std::copy(random_x.begin(), random_x.end(), x.data());
  const double alpha = 1.0, beta = 0.0;

  const std::vector<double> ms =
      interleaved_median_ms({[&] {
                               host::spmv(alpha, a, x.data(), beta, y_ours.data());
                               Kokkos::fence();
                             },
                             [&] {
                               KokkosSparse::spmv("N", alpha, kk, x, beta, y_kk);
                               Kokkos::fence();
                             }},
                            runs, 3);

  std::vector<double> ref(a.nrows);
  reference::spmv(alpha, a, x.data(), beta, ref.data());
  return {name,
          a.nrows,
          nnz,
          ms[0],
          ms[1],
          reference::rel_l2_error(y_ours.data(), ref.data(), ref.size()),
          reference::rel_l2_error(y_kk.data(), ref.data(), ref.size()),
          effective_bytes(a) / 1e9};
}

int run(const ParsedArgs& in) {
  const int runs = static_cast<int>(in.integer("runs", 30, 1, 1000000));
  std::vector<std::string> specs = in.all("matrix");
  if (specs.empty())
    specs = {"laplace2d:n=1000", "uniform:rows=1e6,k=8", "kron:scale=18", "banded:n=1e6,bw=5",
             "fullchip:rows=1e6"};
  std::vector<Result> results;
  for (const std::string& spec : specs)
    results.push_back(measure(spec, gen::from_spec<double>(spec), runs));

  if (in.flag("json")) {
    JsonWriter j(std::cout);
    begin_output(j).key("results").begin_array(true);
    for (const Result& r : results)
      j.value(Record{{"matrix", r.name},
                     {"rows", r.rows},
                     {"nnz", r.nnz},
                     {"kspmv_ms", r.kspmv_ms},
                     {"kokkoskernels_ms", r.kk_ms},
                     {"ratio", r.kspmv_ms / r.kk_ms},
                     {"kspmv_gbs", r.gbytes / (r.kspmv_ms * 1e-3)},
                     {"kokkoskernels_gbs", r.gbytes / (r.kk_ms * 1e-3)},
                     {"kspmv_rel_err", r.kspmv_err},
                     {"kokkoskernels_rel_err", r.kk_err},
                     {"runs", runs}});
    j.end_array().end_object();
  } else {
    std::printf("%-22s %10s %11s %10s %10s %7s %9s %9s %9s\n", "matrix", "rows", "nnz", "kspmv_ms",
                "kk_ms", "ratio", "kspmv_GBs", "kk_GBs", "rel_err");
    for (const Result& r : results)
      std::printf("%-22s %10d %11lld %10.3f %10.3f %7.3f %9.2f %9.2f %9.1e\n", r.name.c_str(),
                  r.rows, static_cast<long long>(r.nnz), r.kspmv_ms, r.kk_ms, r.kspmv_ms / r.kk_ms,
                  r.gbytes / (r.kspmv_ms * 1e-3), r.gbytes / (r.kk_ms * 1e-3), r.kspmv_err);
    std::printf("median of %d runs after 3 warm-up runs; ratio = kspmv / KokkosSparse::spmv\n",
                runs);
  }
  return 0;
}

Command command() {
  Command c;
  c.name = "host_spmv_bench";
  c.program = "";
  c.description = "kspmv's host CSR kernel against KokkosSparse::spmv on the same arrays.";
  c.options = {
      {"matrix", "SPEC", "a generated matrix (kspmv::gen spec); repeatable"},
      {"runs", "N", "timed runs of each kernel (default 30)"},
      {"json", "", "one JSON object (its \"results\": a row each) instead of the table"},
  };
  c.run = run;
  c.extra_help = gen::spec_help;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

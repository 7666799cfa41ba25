// kspmv's host CSR kernel against KokkosSparse::spmv on the same arrays and execution space.
//
//   host_spmv_bench [--matrix SPEC]... [--runs N] [--json]
//
// Matrices come from kspmv::gen::from_spec (default: a 2D Laplacian, uniform random with 8 per
// row, an R-MAT power-law graph, a band, and a circuit-like matrix with long rows). The two
// kernels run alternately after warm-up; the median of N runs is shown with the effective
// bandwidth (bytes of A, x and y once) and the relative l2 error against the oracle.
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/host/spmv.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "testing/reference.hpp"

namespace {

using kspmv::CsrMatrix;
using kspmv::Offset;
using kspmv::Ordinal;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

struct Result {
  std::string name;
  Ordinal rows;
  Offset nnz;
  double kspmv_ms, kk_ms, kspmv_err, kk_err;
  double gbytes;  // bytes of one SpMV, in GB
};

Result run(const std::string& name, const CsrMatrix<double>& a, int runs) {
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
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (Ordinal j = 0; j < a.ncols; ++j) x(j) = dist(gen);
  const double alpha = 1.0, beta = 0.0;

  auto ours = [&] { kspmv::host::spmv(alpha, a, x.data(), beta, y_ours.data()); };
  auto theirs = [&] { KokkosSparse::spmv("N", alpha, kk, x, beta, y_kk); };
  auto time = [](const auto& f) {
    Kokkos::Timer t;
    f();
    Kokkos::fence();
    return t.seconds() * 1e3;
  };
  for (int w = 0; w < 3; ++w) time(ours), time(theirs);
  std::vector<double> t_ours, t_kk;
  for (int r = 0; r < runs; ++r) {
    t_ours.push_back(time(ours));
    t_kk.push_back(time(theirs));
  }

  std::vector<double> ref(a.nrows);
  kspmv::reference::spmv(alpha, a, x.data(), beta, ref.data());
  const double bytes = double(nnz) * (sizeof(double) + sizeof(Ordinal)) +
                       double(a.nrows + 1) * sizeof(Offset) +
                       double(a.nrows + a.ncols) * sizeof(double);
  return {name,
          a.nrows,
          nnz,
          median(t_ours),
          median(t_kk),
          kspmv::reference::rel_l2_error(y_ours.data(), ref.data(), ref.size()),
          kspmv::reference::rel_l2_error(y_kk.data(), ref.data(), ref.size()),
          bytes / 1e9};
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);  // consumes the --kokkos-* arguments
  int runs = 30;
  bool json = false;
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--matrix" && i + 1 < argc) {
      specs.emplace_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--matrix SPEC]... [--runs N (30)] [--json]\n%s\n", argv[0],
                   kspmv::gen::spec_help().c_str());
      return 2;
    }
  }
  if (specs.empty())
    specs = {"laplace2d:n=1000", "uniform:rows=1e6,k=8", "kron:scale=18", "banded:n=1e6,bw=5",
             "fullchip:rows=1e6"};

  std::vector<Result> results;
  try {
    for (const std::string& spec : specs)
      results.push_back(run(spec, kspmv::gen::from_spec<double>(spec), runs));
  } catch (const kspmv::Error& e) {
    std::fprintf(stderr, "host_spmv_bench: %s\n", e.what());
    return 1;
  }

  if (json) {
    std::printf("[\n");
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::printf(
          "  {\"matrix\": \"%s\", \"rows\": %d, \"nnz\": %lld, \"kspmv_ms\": %.6f, "
          "\"kokkoskernels_ms\": %.6f, \"ratio\": %.4f, \"kspmv_gbs\": %.3f, "
          "\"kokkoskernels_gbs\": %.3f, \"kspmv_rel_err\": %.3e, \"kokkoskernels_rel_err\": "
          "%.3e, \"runs\": %d}%s\n",
          r.name.c_str(), r.rows, static_cast<long long>(r.nnz), r.kspmv_ms, r.kk_ms,
          r.kspmv_ms / r.kk_ms, r.gbytes / (r.kspmv_ms * 1e-3), r.gbytes / (r.kk_ms * 1e-3),
          r.kspmv_err, r.kk_err, runs, i + 1 < results.size() ? "," : "");
    }
    std::printf("]\n");
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

// Cost of every partitioner on large generated matrices (row_ptr / col_ptr only).
//
//   partition_bench [--spec SPEC]... [--runs N] [--json]
//
// Default matrices: fullchip:rows=6e6 (mean ~9 nnz/row, a few rows of millions) and
// kmer:rows=2.5e7 (mean ~2.1), both ~5e7 non-zeros. Each scheme runs for N = 2, 4, 8 devices
// (and the NUMA two-level split on two nodes); the median of --runs calls is reported in
// microseconds. pCSC partitions the column pointer, counted from col_idx once before timing.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kspmv/gen/generators.hpp"
#include "partitioners/numa.hpp"
#include "partitioners/partition_plan.hpp"

namespace {

using namespace kspmv;

double median_us(int runs, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Row {
  std::string matrix, scheme;
  Ordinal m;
  Offset nnz;
  int ndevices;
  double us;
};

void bench(const std::string& spec, int runs, std::vector<Row>& out) {
  const auto a = gen::from_spec<float>(spec);
  const Ordinal m = a.nrows, n = a.ncols;
  const Offset nnz = a.nnz();
  const Offset* row_ptr = a.row_ptr.data();
  std::vector<Offset> col_ptr(n + 1, 0);
  for (Offset e = 0; e < nnz; ++e) ++col_ptr[a.col_idx(e) + 1];
  for (Ordinal j = 0; j < n; ++j) col_ptr[j + 1] += col_ptr[j];

  volatile std::size_t sink = 0;  // keeps the calls from being optimized away
  for (int nd : {2, 4, 8}) {
    for (part::Scheme s : part::all_schemes()) {
      const double us = median_us(runs, [&] {
        const auto plan = s == part::Scheme::PCSC
                              ? part::partition_pcsc(col_ptr.data(), m, n, nd)
                              : part::partition(row_ptr, m, n, part::PartitionOptions{s, nd});
        sink = sink + plan.blocks.size();
      });
      out.push_back({spec, part::to_string(s), m, nnz, nd, us});
    }
    part::Topology topo{{{}, {}}};
    for (int d = 0; d < nd; ++d) topo.devices_per_numa_node[d % 2].push_back(d);
    const double us = median_us(
        runs, [&] { sink = sink + part::partition_numa(row_ptr, m, n, topo).blocks.size(); });
    out.push_back({spec, "numa-nz(2 nodes)", m, nnz, nd, us});
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> specs;
  int runs = 21;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--spec") && i + 1 < argc) {
      specs.push_back(argv[++i]);
    } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--json")) {
      json = true;
    } else {
      std::fprintf(stderr, "usage: %s [--spec SPEC]... [--runs N] [--json]\n", argv[0]);
      return 2;
    }
  }
  if (specs.empty()) specs = {"fullchip:rows=6e6", "kmer:rows=2.5e7"};

  Kokkos::initialize(argc, argv);
  std::vector<Row> rows;
  try {
    for (const auto& spec : specs) bench(spec, runs, rows);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "partition_bench: %s\n", e.what());
    Kokkos::finalize();
    return 1;
  }
  Kokkos::finalize();

  if (json) {
    std::printf("[\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf(
          "  {\"matrix\": \"%s\", \"rows\": %d, \"nnz\": %lld, \"scheme\": \"%s\", "
          "\"devices\": %d, \"median_us\": %.2f}%s\n",
          r.matrix.c_str(), r.m, static_cast<long long>(r.nnz), r.scheme.c_str(), r.ndevices, r.us,
          i + 1 < rows.size() ? "," : "");
    }
    std::printf("]\n");
  } else {
    std::printf("%-22s %10s %12s %-18s %3s %12s\n", "matrix", "rows", "nnz", "scheme", "N",
                "median_us");
    for (const Row& r : rows)
      std::printf("%-22s %10d %12lld %-18s %3d %12.2f\n", r.matrix.c_str(), r.m,
                  static_cast<long long>(r.nnz), r.scheme.c_str(), r.ndevices, r.us);
  }
  return 0;
}

// Cost of every partitioner on large generated matrices (row_ptr / col_ptr only).
//
//   partition_bench [--spec SPEC]... [--runs N] [--json]
//
// Default matrices: fullchip:rows=6e6 (mean ~9 nnz/row, a few rows of millions) and
// kmer:rows=2.5e7 (mean ~2.1), both ~5e7 non-zeros. Each scheme runs for N = 2, 4, 8 devices
// (and the NUMA two-level split on two nodes); the median of --runs calls is reported in
// microseconds. pCSC partitions the column pointer, counted from col_idx once before timing.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "kspmv/gen/generators.hpp"
#include "partitioners/numa.hpp"
#include "partitioners/partition_plan.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::tools;

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
      const double ms = median_ms(
          [&] {
            const auto plan = s == part::Scheme::PCSC
                                  ? part::partition_pcsc(col_ptr.data(), m, n, nd)
                                  : part::partition(row_ptr, m, n, part::PartitionOptions{s, nd});
            sink = sink + plan.blocks.size();
          },
          runs);
      out.push_back({spec, part::to_string(s), m, nnz, nd, 1e3 * ms});
    }
    part::Topology topo{{{}, {}}};
    for (int d = 0; d < nd; ++d) topo.devices_per_numa_node[d % 2].push_back(d);
    const double ms = median_ms(
        [&] { sink = sink + part::partition_numa(row_ptr, m, n, topo).blocks.size(); }, runs);
    out.push_back({spec, "numa-nz(2 nodes)", m, nnz, nd, 1e3 * ms});
  }
}

int run(const ParsedArgs& in) {
  const int runs = static_cast<int>(in.integer("runs", 21, 1, 1000000));
  std::vector<std::string> specs = in.all("spec");
  if (specs.empty()) specs = {"fullchip:rows=6e6", "kmer:rows=2.5e7"};
  std::vector<Row> rows;
  for (const auto& spec : specs) bench(spec, runs, rows);

  if (in.flag("json")) {
    JsonWriter j(std::cout);
    begin_output(j).key("results").begin_array(true);
    for (const Row& r : rows)
      j.value(Record{{"matrix", r.matrix},
                     {"rows", r.m},
                     {"nnz", r.nnz},
                     {"scheme", r.scheme},
                     {"devices", r.ndevices},
                     {"median_us", r.us}});
    j.end_array().end_object();
  } else {
    std::printf("%-22s %10s %12s %-18s %3s %12s\n", "matrix", "rows", "nnz", "scheme", "N",
                "median_us");
    for (const Row& r : rows)
      std::printf("%-22s %10d %12lld %-18s %3d %12.2f\n", r.matrix.c_str(), r.m,
                  static_cast<long long>(r.nnz), r.scheme.c_str(), r.ndevices, r.us);
  }
  return 0;
}

Command command() {
  Command c;
  c.name = "partition_bench";
  c.program = "";
  c.description =
      "Cost of every partitioner on large generated matrices: the median time of --runs calls\n"
      "for 2, 4 and 8 devices (and the NUMA two-level split on two nodes).";
  c.options = {
      {"spec", "SPEC",
       "a generated matrix (kspmv::gen spec); repeatable (default fullchip:rows=6e6 and "
       "kmer:rows=2.5e7)"},
      {"runs", "N", "calls timed per scheme (default 21)"},
      {"json", "", "one JSON object (its \"results\": a row each) instead of the table"},
  };
  c.run = run;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

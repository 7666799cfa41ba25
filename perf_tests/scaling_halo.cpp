// The structure behind the scaling model past one node: each family's rows split over 2 to 64
// ranks, contiguous (equal rows, Tpetra's default map) and by kspmv's NZ partitioner (Gao et al.
// 2024, §3.1), and for every rank its rows, non-zeros, x entries owned, the halo it receives and
// sends and its neighbours (part::halo_volumes: what Tpetra's Import moves for a TpetraOperator).
//
//   scaling_halo [--matrix SPEC]... [--ranks 2,4,...] [--out DIR]
//
// Default: the seven large families of spmv_bench (tools::family_specs), built in float (the
// values do not matter, and the largest then needs about 2 GB). Writes scaling_halo.csv, one row
// per (matrix, split, ranks, rank), for perf_tests/scaling_model.py.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "kspmv/gen/generators.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/csv.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::tools;

int run(const ParsedArgs& in) {
  std::vector<std::string> specs = in.all("matrix");
  if (specs.empty()) specs = family_specs(false);
  std::vector<int> rank_counts = {1};
  for (const std::string& r : split(in.text("ranks", "2,4,8,16,32,64"), ',')) {
    const long n = parse_integer(r, "--ranks");
    if (n < 1 || n > 4096) throw UsageError("--ranks: rank counts are in [1, 4096]");
    if (n > 1) rank_counts.push_back(static_cast<int>(n));
  }
  std::vector<Record> rows;
  std::printf("%-26s %-5s %5s %12s %8s %12s %12s %8s\n", "matrix", "split", "ranks", "max_nnz",
              "imbal", "max_recv", "total_recv", "max_nbr");
  for (const std::string& spec : specs) {
    const CsrMatrix<float> a = gen::from_spec<float>(spec);
    for (const part::Scheme scheme : {part::Scheme::Rows, part::Scheme::NZ})
      for (const int ranks : rank_counts) {
        const auto plan = part::partition(a.row_ptr.data(), a.nrows, a.ncols, {scheme, ranks});
        const auto v = part::halo_volumes(plan, a.row_ptr.data(), a.col_idx.data());
        Offset max_nnz = 0;
        long long max_recv = 0, total_recv = 0;
        int max_nbr = 0;
        for (int r = 0; r < ranks; ++r) {
          max_nnz = std::max(max_nnz, v[r].nnz);
          max_recv = std::max<long long>(max_recv, v[r].received);
          total_recv += v[r].received;
          max_nbr = std::max({max_nbr, v[r].sources, v[r].targets});
          rows.push_back({{"matrix", spec},
                          {"split", part::to_string(scheme)},
                          {"ranks", ranks},
                          {"rank", r},
                          {"rows", v[r].rows},
                          {"nnz", v[r].nnz},
                          {"owned", v[r].owned},
                          {"received", v[r].received},
                          {"sent", v[r].sent},
                          {"sources", v[r].sources},
                          {"targets", v[r].targets}});
        }
        std::printf("%-26s %-5s %5d %12lld %8.3f %12lld %12lld %8d\n", spec.c_str(),
                    part::to_string(scheme), ranks, static_cast<long long>(max_nnz),
                    double(max_nnz) * ranks / std::max<double>(1, double(a.nnz())), max_recv,
                    total_recv, max_nbr);
        std::fflush(stdout);
      }
  }
  const std::string out = in.text("out", ".");
  std::filesystem::create_directories(out);
  write_csv((std::filesystem::path(out) / "scaling_halo.csv").string(), rows);
  std::printf(
      "imbal = largest rank's non-zeros over the mean; recv: x entries received; nbr: "
      "most ranks one rank receives from or sends to\n");
  return 0;
}

Command command() {
  Command c;
  c.name = "scaling_halo";
  c.program = "";
  c.description =
      "Per rank of a row split over MPI ranks (contiguous and NZ): rows, non-zeros, x entries\n"
      "owned, halo received and sent, neighbours. Writes scaling_halo.csv into --out, the input\n"
      "of perf_tests/scaling_model.py.";
  c.options = {
      {"matrix", "SPEC", "a generated matrix (default: the seven large families); repeatable"},
      {"ranks", "LIST", "rank counts besides 1 (default 2,4,8,16,32,64)"},
      {"out", "DIR", "output directory (default .)"},
  };
  c.run = run;
  c.extra_help = gen::spec_help;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

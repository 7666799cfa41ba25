// stress_check: every GPU kernel of the registry (CUDA, and kokkos-default's with a CUDA Kokkos)
// run many times on every matrix of a directory (and generator specs), each run on a fresh random x
// and a NaN-poisoned y, the result compared with the long-double reference each time. A wrong
// result that comes and goes (issue: seg-r once gave an error of 0.32 on ri2010) is counted, not
// averaged away. Run it under compute-sanitizer (synccheck, initcheck, memcheck, racecheck) with a
// small --runs as well. Writes stress_check.json into --out; exit status 1 when any run was wrong.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "kspmv/registry.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;

// Counts of one kernel over all matrices.
struct Tally {
  long long runs = 0, wrong = 0;
  double worst = 0;  // largest relative error seen
  std::string first_wrong;
};

// `runs` runs of every kernel of `kernels` on `a`: x cycles through `vectors` random vectors
// (each with its reference computed once, so x changes from one run to the next), y is poisoned
// with NaN before every run.
template <class S>
void stress(const std::string& name, const CsrMatrix<S>& a, const std::vector<BenchKernel>& kernels,
            int runs, int vectors, std::map<std::string, Tally>& tally) {
  const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  std::vector<std::vector<S>> xs, refs;
  for (int v = 0; v < vectors; ++v) {
    xs.push_back(random_values<S>(a.ncols, std::hash<std::string>{}(name) + 7919 * v));
    refs.emplace_back(a.nrows);
    reference::spmv(S(1), a, xs.back().data(), S(0), refs.back().data());
  }
  auto d = std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(host));
  cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
  cuda::Stream stream;
  for (const BenchKernel& k : kernels) {
    Tally& t = tally[to_string(k)];
    const auto spmv = make_bench_spmv(k, d, a);
    for (int r = 0; r < runs; ++r) {
      const std::size_t v = static_cast<std::size_t>(r % vectors);
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(dx.data(), xs[v].data(), dx.bytes(), cudaMemcpyHostToDevice,
                                       stream.get()));
      const double error = poisoned_error(*spmv, dx, dy, refs[v], stream.get());
      ++t.runs;
      t.worst = std::max(t.worst, error);
      if (!(error <= reference::tolerance<S>())) {
        if (t.wrong++ == 0) t.first_wrong = name + " run " + std::to_string(r);
        std::cerr << "WRONG " << to_string(k) << " " << name << " (" << precision_name<S>()
                  << ") run " << r << ": relative error " << error << "\n";
      }
    }
  }
}

int run(const ParsedArgs& args) {
  const int runs = static_cast<int>(args.integer("runs", 1000, 1, 100000000));
  const int vectors = static_cast<int>(args.integer("vectors", 8, 1, 1000));
  const int device = static_cast<int>(args.integer("device", 0, 0, 1 << 20));
  KSPMV_CUDA_CHECK(cudaSetDevice(device));
  std::vector<BenchKernel> kernels;
  if (args.has("kernels")) {
    for (const auto& n : split(args.text("kernels", ""), ','))
      kernels.push_back(parse_bench_kernel(n));
  } else {
    for (const KernelInfo& row : kernels_of(Backend::Cuda))
      kernels.push_back({Backend::Cuda, row.kernel});
    for (const BenchKernel& k : kokkos_gpu_kernels()) kernels.push_back(k);
  }
  std::vector<Source> sources;
  if (args.has("matrices")) sources = matrix_files(args.text("matrices", ""), false);
  for (const Source& g : generated(args.all("gen"))) sources.push_back(g);
  if (sources.empty()) throw UsageError("give --matrices DIR or --gen SPEC");
  std::map<std::string, Tally> tally;
  const auto t0 = Clock::now();
  run_sources(
      sources, precisions(args, "double"), t0, args.number("time-limit", 1e9),
      [&](const std::string& name, const std::string&, const auto& a) {
        stress(name, a, kernels, runs, vectors, tally);
      },
      [](const std::string&, const std::string&, const std::string&) {}, [] {});
  long long wrong = 0;
  std::vector<Record> rows;
  std::cout << "kernel           runs      wrong  worst rel. error\n";
  for (const BenchKernel& k : kernels) {
    const Tally& t = tally[to_string(k)];
    wrong += t.wrong;
    std::printf("%-14s %10lld %8lld  %.3g%s\n", to_string(k).c_str(), t.runs, t.wrong, t.worst,
                t.wrong ? ("  first: " + t.first_wrong).c_str() : "");
    rows.push_back({{"kernel", to_string(k)},
                    {"runs", t.runs},
                    {"wrong", t.wrong},
                    {"worst_rel_error", t.worst},
                    {"first_wrong", t.first_wrong}});
  }
  write_json(args.text("out", ".") + "/stress_check.json",
             {{"device", device_name(device)},
              {"date", utc_date()},
              {"matrices", static_cast<long long>(sources.size())},
              {"runs_per_kernel_and_matrix", runs},
              {"seconds", ms_since(t0) / 1e3},
              {"wrong", wrong}},
             rows);
  std::cout << (wrong == 0 ? "stress_check: every run correct\n" : "stress_check: WRONG runs\n");
  return wrong == 0 ? 0 : 1;
}

Command command() {
  Command c;
  c.name = "stress_check";
  c.program = "";
  c.description =
      "Every GPU kernel of the registry (CUDA; kokkos-csr, -coo, -csc with a CUDA Kokkos), --runs\n"
      "times on every matrix: fresh random x (cycling through --vectors vectors), NaN-poisoned y,\n"
      "each result against the long-double reference.\n"
      "Exit status 1 when any run is wrong. Writes stress_check.json into --out.";
  c.options = {
      kMatricesOption,
      {"gen", "SPEC", "a generated matrix (kspmv::gen spec); repeatable"},
      {"kernels", "LIST", "comma-separated (default: every GPU kernel of the registry)"},
      {"runs", "N", "runs per kernel and matrix (default 1000)"},
      {"vectors", "N", "random x vectors cycled through (default 8)"},
      {"precision", "float|double|both", "default double"},
      {"time-limit", "S", "start no matrix after S seconds"},
      kDeviceOption,
      kOutOption,
  };
  c.run = run;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

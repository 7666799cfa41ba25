// kspmv demo: every available backend and kernel on a few small matrices of different families,
// each checked against the reference and timed; exit 0 only if every result is correct.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "commands.hpp"
#include "testing/reference.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace kspmv::cli {

namespace {

// Small members of the families the papers measure: stencils, uniform random, power law (R-MAT),
// k-mer graphs, circuit-like with long rows. A few seconds in all on two cores.
const std::vector<std::string> kDemoMatrices = {
    "laplace2d:n=512", "stencil27:n=40",    "uniform:rows=200000,k=8",
    "kron:scale=15",   "kmer:rows=1000000", "fullchip:rows=200000",
};

struct Row {
  std::string matrix, backend, kernel, failure;
  double ms = 0, gbs = 0, error = 0;
  bool ok = false;
};

struct Config {
  Backend backend;
  Kernel kernel;
  std::vector<int> devices;
};

// Auto and every registered kernel of each backend this machine runs (CUDA only with a GPU),
// those named by `only` when it is not empty.
std::vector<Config> configs(const std::vector<Kernel>& only) {
  const auto wanted = [&](Kernel k) {
    return only.empty() || std::find(only.begin(), only.end(), k) != only.end();
  };
  const int gpus = cuda_device_count();
  std::vector<Config> all;
  for (const Backend b : kBackends) {
    if (b == Backend::Cuda && gpus == 0) continue;
    if (wanted(Kernel::Auto)) all.push_back({b, Kernel::Auto, {0}});
    for (const KernelInfo& row : kernels_of(b))
      if (wanted(row.kernel)) all.push_back({b, row.kernel, {0}});
  }
  if (gpus > 1 && wanted(Kernel::Auto)) {
    std::vector<int> every(gpus);
    std::iota(every.begin(), every.end(), 0);
    all.push_back({Backend::Cuda, Kernel::Auto, every});
  }
  return all;
}

std::string kernel_label(const Config& c, Kernel chosen) {
  std::string label = to_string(c.kernel);
  if (chosen != c.kernel) label += std::string("->") + to_string(chosen);
  if (c.devices.size() > 1) label += " x" + std::to_string(c.devices.size());
  return label;
}

// Runs one configuration.
template <class Scalar>
void run_config(const CsrMatrix<Scalar>& a, const Config& c, int iters, Row& row) {
  Options options;
  options.backend = c.backend;
  options.kernel = c.kernel;
  options.devices = c.devices;
  row.backend = to_string(c.backend);
  row.kernel = kernel_label(c, c.kernel);
  std::unique_ptr<Operator<Scalar>> op;
  try {
    op = std::make_unique<Operator<Scalar>>(a, options);
  } catch (const Error& e) {
    row.failure = e.what();
    return;
  }
  row.kernel = kernel_label(c, op->kernel());
  try {
    // beta == 0 on NaN-poisoned y, then beta != 0 on random y.
    row.error = std::max(check(*op, a, Scalar(1), Scalar(0), 11),
                         check(*op, a, Scalar(-0.5), Scalar(0.75), 12));
    row.ms = time_applies(*op, Scalar(1), Scalar(0), iters, 13).ms;
    row.gbs = effective_bytes(a) / (row.ms * 1e6);
    row.ok = row.error <= reference::tolerance<Scalar>();
  } catch (const Error& e) {
    row.failure = e.what();
  }
}

template <class Scalar>
int run_demo(const ParsedArgs& args) {
  const bool json = args.flag("json");
  const int iters = static_cast<int>(args.integer("iters", 5, 1, 1000));
  std::vector<Kernel> only;
  if (args.has("kernel"))
    for (const auto& name : split(args.text("kernel", ""), ',')) only.push_back(parse_kernel(name));
  const auto all = configs(only);
  const std::vector<std::string> matrices =
      args.has("matrix") ? split(args.text("matrix", ""), ';') : kDemoMatrices;
  const KokkosBuild kokkos = kokkos_build();
  std::vector<Row> rows;
  if (!json) {
    std::printf("kspmv demo: %zu matrices, %s precision, %s, %d CUDA device(s)\n\n",
                matrices.size(), precision_name<Scalar>(), to_string(kokkos).c_str(),
                cuda_device_count());
    std::printf("%-24s %-14s %-20s %10s %8s %10s  %s\n", "matrix", "backend", "kernel", "time ms",
                "GB/s", "rel error", "ok");
  }
  for (const auto& spec : matrices) {
    const auto a = load_matrix<Scalar>("gen:" + spec);
    if (!json)
      std::printf("-- %s: %d x %d, %lld non-zeros\n", spec.c_str(), a.nrows, a.ncols,
                  static_cast<long long>(a.nnz()));
    for (const auto& c : all) {
      Row row;
      row.matrix = spec;
      run_config(a, c, iters, row);
      if (!json)
        std::printf("%-24s %-14s %-20s %10.4f %8.2f %10.2e  %s\n", spec.c_str(),
                    row.backend.c_str(), row.kernel.c_str(), row.ms, row.gbs, row.error,
                    row.ok                ? "ok"
                    : row.failure.empty() ? "WRONG"
                                          : "FAILED");
      std::fflush(stdout);
      rows.push_back(row);
    }
  }
  const auto wrong = std::count_if(rows.begin(), rows.end(), [](const Row& r) { return !r.ok; });
  if (json) {
    JsonWriter j(std::cout);
    begin_output(j).field("precision", precision_name<Scalar>());
    j.field("kokkos_version", kokkos.version).field("host_execution_space", kokkos.host_space);
    j.field("host_threads", kokkos.host_threads);
    j.field("default_execution_space", kokkos.default_space);
    j.field("cuda_devices", cuda_device_count()).key("runs").begin_array();
    for (const auto& r : rows) {
      j.begin_object()
          .field("matrix", r.matrix)
          .field("backend", r.backend)
          .field("kernel", r.kernel)
          .field("time_ms", r.ms)
          .field("gbs", r.gbs)
          .field("rel_error", r.error)
          .field("ok", r.ok);
      if (!r.failure.empty()) j.field("failure", r.failure);
      j.end_object();
    }
    j.end_array().field("wrong", static_cast<long long>(wrong)).field("ok", wrong == 0);
    j.end_object();
  } else {
    for (const auto& r : rows)
      if (!r.failure.empty())
        std::printf("FAILED %s %s %s: %s\n", r.matrix.c_str(), r.backend.c_str(), r.kernel.c_str(),
                    r.failure.c_str());
    if (wrong == 0)
      std::printf("\ndemo: all %zu runs correct\n", rows.size());
    else
      std::printf("\ndemo: %lld of %zu runs WRONG or FAILED\n", static_cast<long long>(wrong),
                  rows.size());
  }
  return wrong == 0 ? 0 : 1;
}

int run(const ParsedArgs& args) {
  const std::string precision = args.text("precision", "double");
  if (precision == "double") return run_demo<double>(args);
  if (precision == "float") return run_demo<float>(args);
  throw UsageError("--precision must be float or double, got '" + precision + "'");
}

}  // namespace

Command demo_command() {
  Command c;
  c.name = "demo";
  c.summary = "run every available backend and kernel on small generated matrices";
  c.description =
      "Generates a few small matrices of different families (stencils, uniform random,\n"
      "power law, k-mer, circuit-like), runs every kernel of every backend this build and\n"
      "machine offer (CUDA only with a GPU; kokkos-default on Kokkos' default execution\n"
      "space), checks each result against the serial reference\n"
      "(beta = 0 on NaN-poisoned y, and a beta != 0 case) and prints a table with the median\n"
      "time and effective bandwidth. Exit status 0 only if every result is correct.";
  c.options = {
      {"precision", "float|double", "scalar type (default double)"},
      {"iters", "N", "timed applies per kernel (default 5)"},
      {"kernel", "LIST", "only these kernels, comma-separated (e.g. auto,csr-vector)"},
      {"matrix", "LIST",
       "only these generator specs, separated by ';' (e.g. 'kron:scale=12;laplace2d:n=64')"},
      {"json", "", "print one JSON object instead of the table"},
  };
  c.run = run;
  return c;
}

}  // namespace kspmv::cli

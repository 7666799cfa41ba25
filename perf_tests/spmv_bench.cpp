// GPU SpMV benchmark: every CUDA kernel against cuSPARSE on the same device buffers.
// Per matrix, precision and kernel: median of --reps event-timed runs after warm-up (every kernel
// of a matrix timed in the same rounds, one run of each per round), effective
// GB/s (DESIGN.md "Measuring") and its ratio to a device-to-device copy measured in this run,
// GFLOP/s = 2 nnz / t, speedup over cuSPARSE CSR_ALG1, relative l2 error against the host
// reference (y poisoned with NaN before the checked run). Full-Overlap (matrix streamed from
// pinned host memory on every run, so its time includes the transfer) also reports the H2D copy
// of the same bytes alone and cuSPARSE copy-then-SpMV (that copy, then the cuSPARSE kernel),
// timed in the same rounds as Full-Overlap itself. Writes
// spmv_bench.csv, spmv_bench.json and summary.json into --out. The row "auto-tuned" is an
// Operator with Kernel::Auto and Options::autotune: after its tuning calls, the median kernel
// time of the kernel it kept.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/memory.hpp"
#include "bench_common.hpp"
#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/registry.hpp"
#include "testing/reference.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;

// cuSPARSE first (the others' speedups are over it), every other CUDA row of the registry, auto.
std::vector<Kernel> default_kernels() {
  std::vector<Kernel> kernels = {Kernel::Cusparse};
  for (const KernelInfo& row : kernels_of(Backend::Cuda))
    if (row.kernel != Kernel::Cusparse) kernels.push_back(row.kernel);
  kernels.push_back(Kernel::Auto);
  return kernels;
}

struct Args {  // read_args() sets every field
  std::string matrices, out;
  std::vector<std::string> gens, precisions;
  std::vector<Kernel> kernels;
  std::vector<int> vector_sizes;  // extra CSR-Vector rows with a fixed vector size
  bool autotune = false;
  int reps = 0, device = 0;
};

Args read_args(const ParsedArgs& in) {
  Args a;
  a.matrices = in.text("matrices", "");
  a.out = in.text("out", ".");
  a.gens = in.all("gen");
  if (a.gens.empty() && !in.flag("no-default-gen")) a.gens = family_specs(in.flag("quick"));
  a.precisions = precisions(in, "both");
  if (!in.has("kernels")) a.kernels = default_kernels();
  for (const auto& name : split(in.text("kernels", ""), ','))
    a.kernels.push_back(parse_kernel(name));
  for (const auto& v : split(in.text("vector-sizes", ""), ','))
    a.vector_sizes.push_back(static_cast<int>(parse_integer(v, "--vector-sizes")));
  a.autotune = !in.flag("no-autotune");
  a.reps = static_cast<int>(in.integer("reps", 20, 1, 1000000));
  a.device = static_cast<int>(in.integer("device", 0, 0, 1023));
  return a;
}

struct Result {
  std::string matrix, precision, kernel, note;
  Ordinal m = 0, n = 0;
  Offset nnz = 0;
  double ms = NAN, gbps = NAN, copy_ratio = NAN, gflops = NAN, speedup = NAN, rel_error = NAN;
  double h2d_ms = NAN, cusparse_copy_spmv_ms = NAN;  // full-overlap only
  // auto-tuned only: the operator's time over the kernel it kept, bare, for single applies and
  // for bursts of kBurst applies back to back (a solver's loop)
  double over_kernel = NAN, over_kernel_burst = NAN;
  bool ok = true;
};

// Kernel::Auto with Options::autotune through the CUDA operator: the tuning calls first (each a
// correct SpMV), then the median of the event-timed kernel of --reps calls; checked like the
// others on a poisoned y.
template <class S>
Result bench_autotuned(const std::string& name, const CsrMatrix<S>& a, const std::vector<S>& ref,
                       std::shared_ptr<const cuda::DeviceCsr<S>> d, cuda::DeviceBuffer<S>& dx,
                       cuda::DeviceBuffer<S>& dy, cudaStream_t stream, const Args& args,
                       double copy, double cusparse_ms) {
  Result r;
  r.matrix = name, r.precision = precision_name<S>(), r.kernel = "auto-tuned";
  r.m = a.nrows, r.n = a.ncols, r.nnz = a.nnz();
  std::cerr << "  " << r.precision << " auto-tuned ... " << std::flush;
  try {
    Options o;
    o.backend = Backend::Cuda, o.kernel = Kernel::Auto, o.autotune = true;
    o.devices = {args.device};
    const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                              a.ncols};
    auto op = cuda::make_operator(host, o);
    do  // until the tuner has kept a kernel
      op->apply_device(S(1), dx.data(), S(0), dy.data(), stream);
    while (op->timings().tuning);
    op->synchronize();
    KSPMV_CUDA_CHECK(cudaMemsetAsync(dy.data(), 0xff, dy.bytes(), stream));  // before the apply
    op->apply_device(S(1), dx.data(), S(0), dy.data(), stream);
    op->synchronize();
    std::vector<S> y(a.nrows);
    dy.download(y.data());
    r.rel_error = reference::rel_l2_error(y.data(), ref.data(), y.size());
    r.ok = r.rel_error <= reference::tolerance<S>();
    // The tuned operator's apply and the kernel it kept, bare, timed the same way in the same
    // rounds, one apply per timed region (its host calls show on the device's clock) and bursts
    // of kBurst (the host enqueues ahead of the device): the operator must add nothing beyond
    // noise.
    const auto kept = cuda::make_device_spmv(op->kernel(), d, host);
    const auto apply = [&] { op->apply_device(S(1), dx.data(), S(0), dy.data(), stream); };
    const auto bare = [&] { kept->run(S(1), dx.data(), S(0), dy.data(), stream); };
    const auto times = time_interleaved_ms({apply, bare}, stream, args.reps);
    constexpr int kBurst = 20;
    const auto bursts = time_interleaved_ms({[&] {
                                               for (int i = 0; i < kBurst; ++i) apply();
                                             },
                                             [&] {
                                               for (int i = 0; i < kBurst; ++i) bare();
                                             }},
                                            stream, args.reps);
    r.ms = times[0];
    r.over_kernel = times[0] / times[1];
    r.over_kernel_burst = bursts[0] / bursts[1];
    const bool slow = r.over_kernel > 1.1 || r.over_kernel_burst > 1.1;
    r.note = std::string("autotune kept ") + to_string(op->kernel()) + ", " + fmt(r.over_kernel) +
             "x the kernel alone (" + fmt(1e3 * (times[0] - times[1])) + " us more), " +
             fmt(r.over_kernel_burst) + "x in bursts of " + std::to_string(kBurst) +
             (slow ? " (FLAG: tuned more than 10% slower)" : "");
    r.gbps = effective_bytes(a) / (r.ms * 1e6);
    r.copy_ratio = r.gbps / copy;
    r.gflops = 2.0 * r.nnz / (r.ms * 1e6);
    r.speedup = cusparse_ms / r.ms;
    std::cerr << fmt(r.ms) << " ms, err " << fmt(r.rel_error) << ", " << r.note << "\n";
  } catch (const Error& e) {
    r.ok = false;
    r.note = e.what();
    std::cerr << "ERROR " << e.what() << "\n";
  }
  return r;
}

template <class S>
void bench_matrix(const std::string& name, const CsrMatrix<S>& a, const Args& args, double copy,
                  std::vector<Result>& out) {
  CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  const Offset nnz = a.nnz();
  const double bytes = effective_bytes(a);
  const char* precision = precision_name<S>();
  // One fresh random x per matrix and precision (never zeros); its reference is computed once.
  const std::vector<S> x = random_values<S>(a.ncols, std::hash<std::string>{}(name) ^ sizeof(S));
  std::vector<S> ref(a.nrows);
  reference::spmv(S(1), a, x.data(), S(0), ref.data());

  auto d = std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(host));
  cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
  dx.upload(x.data());
  cuda::Stream stream;

  // Each kernel, then CSR-Vector with each fixed vector size (0: the kernel's own choice): all
  // built and checked first, then timed round by round in the same rounds (a device that slows
  // down for a while slows every kernel alike, not the ones timed then).
  std::vector<std::pair<Kernel, int>> cases;
  for (const Kernel k : args.kernels) cases.emplace_back(k, 0);
  for (const int v : args.vector_sizes) cases.emplace_back(Kernel::CsrVector, v);
  std::vector<Result> rows;
  std::vector<std::unique_ptr<cuda::DeviceSpmv<S>>> kernels;
  for (const auto& [k, v] : cases) {
    Result r;
    r.matrix = name, r.precision = precision;
    r.kernel = to_string(k) + (v > 0 ? ":v=" + std::to_string(v) : std::string());
    r.m = a.nrows, r.n = a.ncols, r.nnz = nnz;
    std::unique_ptr<cuda::DeviceSpmv<S>> spmv;
    try {
      const Kernel resolved =
          k == Kernel::Auto
              ? analysis::auto_kernel(analysis::row_stats(a.row_ptr.data(), a.nrows, a.ncols),
                                      sizeof(S))
              : k;
      if (k == Kernel::Auto) r.note = std::string("rule chose ") + to_string(resolved);
      spmv = v > 0 ? cuda::make_csr_vector(d, host, {v, 0})
                   : cuda::make_device_spmv(resolved, d, host);
      r.rel_error = poisoned_error(*spmv, dx, dy, ref, stream.get());
      r.ok = r.rel_error <= reference::tolerance<S>();
    } catch (const DeviceOutOfMemory& e) {
      r.note = std::string("out of device memory: ") + e.what();
      spmv.reset();
    } catch (const Error& e) {
      r.ok = false;
      r.note = e.what();
      spmv.reset();
    }
    rows.push_back(r);
    kernels.push_back(std::move(spmv));
  }
  std::vector<Body> bodies;
  std::vector<std::size_t> timed;  // the rows of `bodies`
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (kernels[i] && cases[i].first != Kernel::FullOverlap) {
      cuda::DeviceSpmv<S>* spmv = kernels[i].get();
      bodies.push_back([&, spmv] { spmv->run(S(1), dx.data(), S(0), dy.data(), stream.get()); });
      timed.push_back(i);
    }
  }
  const std::vector<double> times = time_interleaved_ms(bodies, stream.get(), args.reps);
  for (std::size_t j = 0; j < timed.size(); ++j) rows[timed[j]].ms = times[j];
  double cusparse_ms = NAN;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (cases[i].first == Kernel::Cusparse && cases[i].second == 0) cusparse_ms = rows[i].ms;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Result& r = rows[i];
    if (kernels[i] && cases[i].first == Kernel::FullOverlap) {
      // Full-Overlap streams the matrix on every run: compare, round by round, with the same
      // matrix bytes copied alone from pinned memory, and with that copy followed by cuSPARSE
      // (its copy-then-SpMV).
      const std::size_t mbytes = static_cast<std::size_t>(nnz) * (sizeof(S) + 4) +
                                 (static_cast<std::size_t>(a.nrows) + 1) * 4;
      cuda::PinnedBuffer<unsigned char> pinned(mbytes);
      cuda::DeviceBuffer<unsigned char> staging(mbytes);
      const auto copy_matrix = [&] {
        KSPMV_CUDA_CHECK(cudaMemcpyAsync(staging.data(), pinned.data(), mbytes,
                                         cudaMemcpyHostToDevice, stream.get()));
      };
      const auto cusparse = cuda::make_device_spmv(Kernel::Cusparse, d, host);
      const auto copy_then_cusparse = [&] {
        copy_matrix();
        cusparse->run(S(1), dx.data(), S(0), dy.data(), stream.get());
      };
      const auto run = [&] { kernels[i]->run(S(1), dx.data(), S(0), dy.data(), stream.get()); };
      const std::vector<double> t =
          time_interleaved_ms({run, copy_matrix, copy_then_cusparse}, stream.get(), args.reps);
      r.ms = t[0], r.h2d_ms = t[1], r.cusparse_copy_spmv_ms = t[2];
    }
    if (std::isfinite(r.ms)) {
      r.gbps = bytes / (r.ms * 1e6);
      r.copy_ratio = r.gbps / copy;
      r.gflops = 2.0 * nnz / (r.ms * 1e6);
      r.speedup = cusparse_ms / r.ms;
    }
    std::cerr << "  " << precision << " " << r.kernel << ": " << fmt(r.ms) << " ms, " << fmt(r.gbps)
              << " GB/s, err " << fmt(r.rel_error) << (r.ok ? "" : "  FAILED CHECK")
              << (r.note.empty() ? "" : ", " + r.note) << "\n";
    out.push_back(r);
  }
  if (args.autotune)
    out.push_back(bench_autotuned(name, a, ref, d, dx, dy, stream.get(), args, copy, cusparse_ms));
}

// The CSV columns, in order; the JSON of a result adds full_overlap_ms on Full-Overlap rows.
Record record(const Result& r) {
  return {{"matrix", r.matrix},
          {"rows", r.m},
          {"cols", r.n},
          {"nnz", r.nnz},
          {"precision", r.precision},
          {"kernel", r.kernel},
          {"ms", r.ms},
          {"gbps", r.gbps},
          {"copy_ratio", r.copy_ratio},
          {"gflops", r.gflops},
          {"speedup_vs_cusparse", r.speedup},
          {"rel_error", r.rel_error},
          {"ok", r.ok},
          {"h2d_ms", r.h2d_ms},
          {"cusparse_copy_spmv_ms", r.cusparse_copy_spmv_ms},
          {"note", r.note}};
}

void write_outputs(const Args& args, const std::vector<Result>& results, double copy) {
  std::vector<Record> rows, full;
  for (const Result& r : results) {
    rows.push_back(record(r));
    full.push_back(rows.back());
    if (std::isfinite(r.h2d_ms)) full.back().emplace_back("full_overlap_ms", r.ms);
    if (std::isfinite(r.over_kernel)) {
      full.back().emplace_back("over_kernel", r.over_kernel);
      full.back().emplace_back("over_kernel_burst", r.over_kernel_burst);
    }
  }
  write_results(
      args.out, "spmv_bench",
      {{"device", device_name(args.device)}, {"date", utc_date()}, {"copy_gbps", copy}}, rows, full,
      {"matrix", "nnz", "precision", "kernel", "ms", "gbps", "speedup_vs_cusparse", "rel_error"});
}

void print_table(const std::vector<Result>& results) {
  std::printf("%-28s %-6s %-16s %10s %9s %8s %10s\n", "matrix", "prec", "kernel", "ms", "GB/s",
              "vs cusp", "rel_err");
  for (const auto& r : results) {
    std::printf("%-28.28s %-6s %-16s %10.4f %9.1f %8.2f %10.2e%s\n", r.matrix.c_str(),
                r.precision.c_str(), r.kernel.c_str(), r.ms, r.gbps, r.speedup, r.rel_error,
                r.ok ? "" : "  FAILED");
  }
}

int run(const ParsedArgs& parsed) {
  const Args args = read_args(parsed);
  if (cuda::device_count() <= args.device)
    throw InvalidArgument("no CUDA device " + std::to_string(args.device));
  KSPMV_CUDA_CHECK(cudaSetDevice(args.device));
  const double copy = copy_gbps(args.reps);
  std::cerr << "device-to-device copy: " << fmt(copy) << " GB/s\n";

  std::vector<Result> results;
  run_sources(
      benchmark_sources(args.matrices, args.gens, 40000), args.precisions, Clock::now(), INFINITY,
      [&](const std::string& name, const std::string&, const auto& a) {
        bench_matrix(name, a, args, copy, results);
      },
      [&](const std::string& name, const std::string& precision, const std::string& what) {
        Result r;  // a matrix that cannot load or upload: noted, the run goes on
        r.matrix = name, r.precision = precision, r.kernel = "-", r.ok = false, r.note = what;
        results.push_back(r);
      },
      [&] { write_outputs(args, results, copy); });
  print_table(results);
  const bool ok = std::all_of(results.begin(), results.end(), [](const Result& r) { return r.ok; });
  std::cerr << (ok ? "all results match the reference\n" : "SOME RESULTS FAILED\n");
  return ok ? 0 : 1;
}

Command command() {
  Command c;
  c.name = "spmv_bench";
  c.program = "";
  c.description =
      "Every CUDA kernel against cuSPARSE on the same device buffers, per matrix and precision:\n"
      "median time, effective GB/s, GFLOP/s, speedup over cuSPARSE, error against the host\n"
      "reference. Writes spmv_bench.csv, spmv_bench.json and summary.json into --out.";
  c.options = {
      kMatricesOption,
      {"gen", "SPEC",
       "a generated matrix (kspmv::gen spec, e.g. kron:scale=21); repeatable; without --gen the "
       "large default families run (small ones with --quick)"},
      {"no-default-gen", "", "no default families without --gen"},
      {"quick", "", "the small default families"},
      {"kernels", "a,b,c",
       "default: cusparse (the baseline, first), every other CUDA kernel of the registry, auto"},
      {"precision", "float|double|both", "default both"},
      {"reps", "N", "event-timed runs per kernel (default 20)"},
      kDeviceOption,
      {"no-autotune", "", "leave out the auto-tuned row (Kernel::Auto with Options::autotune)"},
      {"vector-sizes", "2,4,...",
       "also run CSR-Vector with each of these lanes per row (rows named csr-vector:v=N; "
       "csr-vector alone picks its own)"},
      kOutOption,
  };
  c.run = run;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

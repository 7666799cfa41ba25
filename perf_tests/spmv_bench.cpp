// GPU SpMV benchmark: every CUDA kernel against cuSPARSE on the same device buffers.
// Per matrix, precision and kernel: median of --reps event-timed runs after warm-up, effective
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
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
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
namespace fs = std::filesystem;

const char* kUsage =
    "usage: spmv_bench [--matrices DIR] [--gen SPEC]... [--no-default-gen] [--kernels a,b,c]\n"
    "                  [--precision float|double|both] [--reps N] [--quick] [--device D]\n"
    "                  [--no-autotune] [--vector-sizes 2,4,...] [--out DIR]\n"
    "  --matrices DIR  every .mtx / .mtx.gz in DIR with >= 40000 non-zeros\n"
    "  --gen SPEC      a generated matrix (kspmv::gen spec, e.g. kron:scale=21); repeatable;\n"
    "                  without --gen the large default families run (small ones with --quick)\n"
    "  --kernels       default: cusparse (the baseline, first), every other CUDA kernel of the\n"
    "                  registry, auto\n"
    "  --no-autotune   leave out the auto-tuned row (Kernel::Auto with Options::autotune)\n"
    "  --vector-sizes  also run CSR-Vector with each of these lanes per row (rows named\n"
    "                  csr-vector:v=N; csr-vector alone picks its own)\n";

// cuSPARSE first (the others' speedups are over it), every other CUDA row of the registry, auto.
std::vector<Kernel> default_kernels() {
  std::vector<Kernel> kernels = {Kernel::Cusparse};
  for (const KernelInfo& row : kernels_of(Backend::Cuda))
    if (row.kernel != Kernel::Cusparse) kernels.push_back(row.kernel);
  kernels.push_back(Kernel::Auto);
  return kernels;
}

struct Args {
  std::string matrices, out = ".";
  std::vector<std::string> gens;
  bool default_gen = true, quick = false, autotune = true;
  std::vector<Kernel> kernels = default_kernels();
  std::vector<int> vector_sizes;  // extra CSR-Vector rows with a fixed vector size
  std::vector<std::string> precisions = {"float", "double"};
  int reps = 20, device = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (Arguments in(argc, argv, kUsage); in.next();) {
    const std::string& k = in.flag();
    if (k == "--matrices")
      a.matrices = in.value();
    else if (k == "--gen")
      a.gens.push_back(in.value());
    else if (k == "--no-default-gen")
      a.default_gen = false;
    else if (k == "--quick")
      a.quick = true;
    else if (k == "--no-autotune")
      a.autotune = false;
    else if (k == "--out")
      a.out = in.value();
    else if (k == "--reps")
      a.reps = std::max(1, std::stoi(in.value()));
    else if (k == "--device")
      a.device = std::stoi(in.value());
    else if (k == "--kernels") {
      a.kernels.clear();
      for (const auto& name : split(in.value(), ',')) a.kernels.push_back(parse_kernel(name));
    } else if (k == "--vector-sizes") {
      for (const auto& v : split(in.value(), ',')) a.vector_sizes.push_back(std::stoi(v));
    } else if (k == "--precision")
      a.precisions = parse_precisions(in.value());
    else
      in.unknown();
  }
  if (a.gens.empty() && a.default_gen) a.gens = family_specs(a.quick);
  return a;
}

struct Result {
  std::string matrix, precision, kernel, note;
  Ordinal m = 0, n = 0;
  Offset nnz = 0;
  double ms = NAN, gbps = NAN, copy_ratio = NAN, gflops = NAN, speedup = NAN, rel_error = NAN;
  double h2d_ms = NAN, cusparse_copy_spmv_ms = NAN;  // full-overlap only
  bool ok = true;
};

// Device-to-device copy bandwidth (bytes read + written per second, GB/s) of a 1 GiB buffer.
double copy_gbps(int reps) {
  const std::size_t bytes = std::size_t{1} << 30;
  cuda::DeviceBuffer<unsigned char> a(bytes), b(bytes);
  KSPMV_CUDA_CHECK(cudaMemset(a.data(), 1, bytes));
  cuda::Stream s;
  const double ms = time_ms(
      [&] {
        KSPMV_CUDA_CHECK(
            cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s.get()));
      },
      s.get(), reps);
  return 2.0 * bytes / (ms * 1e6);
}

// Kernel::Auto with Options::autotune through the CUDA operator: the tuning calls first (each a
// correct SpMV), then the median of the event-timed kernel of --reps calls; checked like the
// others on a poisoned y.
template <class S>
Result bench_autotuned(const std::string& name, const CsrMatrix<S>& a, const std::vector<S>& x,
                       const std::vector<S>& ref, cuda::DeviceBuffer<S>& dx,
                       cuda::DeviceBuffer<S>& dy, const Args& args, double copy,
                       double cusparse_ms) {
  Result r;
  r.matrix = name, r.precision = sizeof(S) == 4 ? "float" : "double", r.kernel = "auto-tuned";
  r.m = a.nrows, r.n = a.ncols, r.nnz = a.nnz();
  std::cerr << "  " << r.precision << " auto-tuned ... " << std::flush;
  try {
    Options o;
    o.backend = Backend::Cuda, o.kernel = Kernel::Auto, o.autotune = true;
    o.devices = {args.device};
    auto op = cuda::make_operator(
        CsrPointers<S>{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols}, o);
    for (int i = 0; i < 8 * cuda::kAutotuneTrials; ++i)  // more than the candidates need
      op->apply_device(S(1), dx.data(), S(0), dy.data());
    KSPMV_CUDA_CHECK(cudaMemset(dy.data(), 0xff, dy.bytes()));
    op->apply_device(S(1), dx.data(), S(0), dy.data());
    std::vector<S> y(a.nrows);
    dy.download(y.data());
    r.rel_error = reference::rel_l2_error(y.data(), ref.data(), y.size());
    r.ok = r.rel_error <= reference::tolerance<S>();
    std::vector<double> ms;
    for (int i = 0; i < args.reps; ++i) {
      op->apply_device(S(1), dx.data(), S(0), dy.data());
      ms.push_back(op->timings().kernel_ms);
    }
    r.ms = median(ms);
    r.note = std::string("autotune kept ") + to_string(op->kernel());
    r.gbps = bytes_moved(a) / (r.ms * 1e6);
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
void bench_matrix(const std::string& name, const CsrMatrix<S>& a, const char* precision,
                  const Args& args, double copy, std::vector<Result>& out) {
  CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  const Offset nnz = a.nnz();
  const double bytes = bytes_moved(a);
  // One fresh random x per matrix and precision (never zeros); its reference is computed once.
  const std::vector<S> x = random_values<S>(a.ncols, std::hash<std::string>{}(name) ^ sizeof(S));
  std::vector<S> ref(a.nrows);
  reference::spmv(S(1), a, x.data(), S(0), ref.data());

  auto d = std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(host));
  cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
  dx.upload(x.data());
  cuda::Stream stream;
  std::vector<S> y(a.nrows);
  double cusparse_ms = NAN;

  // Each kernel, then CSR-Vector with each fixed vector size (0: the kernel's own choice).
  std::vector<std::pair<Kernel, int>> cases;
  for (const Kernel k : args.kernels) cases.emplace_back(k, 0);
  for (const int v : args.vector_sizes) cases.emplace_back(Kernel::CsrVector, v);
  for (const auto& [k, v] : cases) {
    Result r;
    r.matrix = name, r.precision = precision;
    r.kernel = to_string(k) + (v > 0 ? ":v=" + std::to_string(v) : std::string());
    r.m = a.nrows, r.n = a.ncols, r.nnz = nnz;
    std::cerr << "  " << precision << " " << r.kernel << " ... " << std::flush;
    try {
      auto poison = [&] {
        KSPMV_CUDA_CHECK(cudaMemsetAsync(dy.data(), 0xff, dy.bytes(), stream.get()));  // NaN
      };
      const Kernel resolved =
          k == Kernel::Auto
              ? analysis::auto_kernel(analysis::row_stats(a.row_ptr.data(), a.nrows, a.ncols),
                                      sizeof(S))
              : k;
      if (k == Kernel::Auto) r.note = std::string("rule chose ") + to_string(resolved);
      auto spmv = v > 0 ? cuda::make_csr_vector(d, host, {v, 0})
                        : cuda::make_device_spmv(resolved, d, host);
      poison();
      spmv->run(S(1), dx.data(), S(0), dy.data(), stream.get());
      stream.synchronize();
      dy.download(y.data());
      r.rel_error = reference::rel_l2_error(y.data(), ref.data(), y.size());
      r.ok = r.rel_error <= reference::tolerance<S>();
      const auto run = [&] { spmv->run(S(1), dx.data(), S(0), dy.data(), stream.get()); };
      if (k != Kernel::FullOverlap) {
        r.ms = time_ms(run, stream.get(), args.reps);
      } else {
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
        const std::vector<double> t =
            time_interleaved_ms({run, copy_matrix, copy_then_cusparse}, stream.get(), args.reps);
        r.ms = t[0], r.h2d_ms = t[1], r.cusparse_copy_spmv_ms = t[2];
      }
      if (k == Kernel::Cusparse) cusparse_ms = r.ms;
      r.gbps = bytes / (r.ms * 1e6);
      r.copy_ratio = r.gbps / copy;
      r.gflops = 2.0 * nnz / (r.ms * 1e6);
      r.speedup = cusparse_ms / r.ms;
      std::cerr << fmt(r.ms) << " ms, " << fmt(r.gbps) << " GB/s, err " << fmt(r.rel_error)
                << (r.ok ? "" : "  FAILED CHECK") << (r.note.empty() ? "" : ", " + r.note) << "\n";
    } catch (const DeviceOutOfMemory& e) {
      r.note = std::string("out of device memory: ") + e.what();
      std::cerr << r.note << "\n";
    } catch (const Error& e) {
      r.ok = false;
      r.note = e.what();
      std::cerr << "ERROR " << e.what() << "\n";
    }
    out.push_back(r);
  }
  if (args.autotune)
    out.push_back(bench_autotuned(name, a, x, ref, dx, dy, args, copy, cusparse_ms));
}

template <class S>
void run_one(const std::string& name, const std::function<CsrMatrix<S>()>& load,
             const char* precision, const Args& args, double copy, std::vector<Result>& out) {
  std::cerr << name << " (" << precision << "): loading ... " << std::flush;
  const auto t0 = std::chrono::steady_clock::now();
  const CsrMatrix<S> a = load();
  std::cerr << a.nrows << " x " << a.ncols << ", " << a.nnz() << " nnz in "
            << fmt(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())
            << " s\n";
  bench_matrix<S>(name, a, precision, args, copy, out);
}

void write_outputs(const Args& args, const std::vector<Result>& results, double copy) {
  fs::create_directories(args.out);
  std::ofstream csv(fs::path(args.out) / "spmv_bench.csv");
  csv << "matrix,rows,cols,nnz,precision,kernel,ms,gbps,copy_ratio,gflops,speedup_vs_cusparse,"
         "rel_error,ok,h2d_ms,cusparse_copy_spmv_ms,note\n";
  for (const auto& r : results) {
    const std::string note = csv_cell(r.note);
    csv << csv_field(r.matrix) << ',' << r.m << ',' << r.n << ',' << r.nnz << ',' << r.precision
        << ',' << r.kernel << ',' << fmt(r.ms) << ',' << fmt(r.gbps) << ',' << fmt(r.copy_ratio)
        << ',' << fmt(r.gflops) << ',' << fmt(r.speedup) << ',' << fmt(r.rel_error) << ','
        << (r.ok ? 1 : 0) << ',' << fmt(r.h2d_ms) << ',' << fmt(r.cusparse_copy_spmv_ms) << ','
        << note << '\n';
  }
  const std::string device = device_name(args.device), date = utc_date();
  auto write_json = [&](const fs::path& path, bool full) {
    std::ofstream j(path);
    j << "{\"device\":" << json_str(device) << ",\"date\":" << json_str(date)
      << ",\"copy_gbps\":" << json_num(copy) << ",\"results\":[";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      j << (i ? ",\n" : "\n") << "{\"matrix\":" << json_str(r.matrix) << ",\"nnz\":" << r.nnz
        << ",\"precision\":" << json_str(r.precision) << ",\"kernel\":" << json_str(r.kernel)
        << ",\"ms\":" << json_num(r.ms) << ",\"gbps\":" << json_num(r.gbps)
        << ",\"speedup_vs_cusparse\":" << json_num(r.speedup)
        << ",\"rel_error\":" << json_num(r.rel_error);
      if (full) {
        j << ",\"rows\":" << r.m << ",\"cols\":" << r.n
          << ",\"copy_ratio\":" << json_num(r.copy_ratio) << ",\"gflops\":" << json_num(r.gflops)
          << ",\"ok\":" << (r.ok ? "true" : "false") << ",\"note\":" << json_str(r.note);
        if (std::isfinite(r.h2d_ms)) {
          j << ",\"h2d_ms\":" << json_num(r.h2d_ms)
            << ",\"cusparse_copy_spmv_ms\":" << json_num(r.cusparse_copy_spmv_ms)
            << ",\"full_overlap_ms\":" << json_num(r.ms);
        }
      }
      j << "}";
    }
    j << "\n]}\n";
  };
  write_json(fs::path(args.out) / "spmv_bench.json", true);
  write_json(fs::path(args.out) / "summary.json", false);
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

int run(int argc, char** argv) {
  const Args args = parse(argc, argv);
  if (cuda::device_count() <= args.device)
    throw InvalidArgument("no CUDA device " + std::to_string(args.device));
  KSPMV_CUDA_CHECK(cudaSetDevice(args.device));
  const double copy = copy_gbps(args.reps);
  std::cerr << "device-to-device copy: " << fmt(copy) << " GB/s\n";

  const auto sources = benchmark_sources(args.matrices, args.gens, 40000);

  std::vector<Result> results;
  for (const auto& [name, path] : sources) {
    for (const auto& precision : args.precisions) {
      try {
        if (precision == "float") {
          run_one<float>(
              name, [&] { return load_source<float>(name, path); }, "float", args, copy, results);
        } else {
          run_one<double>(
              name, [&] { return load_source<double>(name, path); }, "double", args, copy, results);
        }
      } catch (const Error& e) {  // a matrix that cannot load or upload: note it, go on
        std::cerr << "ERROR " << name << " (" << precision << "): " << e.what() << "\n";
        Result r;
        r.matrix = name, r.precision = precision, r.kernel = "-", r.ok = false;
        r.note = e.what();
        results.push_back(r);
      }
    }
    write_outputs(args, results, copy);  // after every matrix: a cut-short run keeps its results
  }
  print_table(results);
  const bool ok = std::all_of(results.begin(), results.end(), [](const Result& r) { return r.ok; });
  std::cerr << (ok ? "all results match the reference\n" : "SOME RESULTS FAILED\n");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main("spmv_bench", argc, argv, run);
}

// Multi-GPU conjugate gradients benchmark (Gao et al. 2024 §5.3, §6.5): per SPD matrix, CG time
// per iteration on one GPU against N GPUs with AllGather over LRA and LRA+RC (vector operations
// redundant on every device, Alg. 1 in the paper's iterative framework), Halo over NZ (owned
// vectors, dot products reduced across devices) and the CG(comp) baseline that sends p before
// each SpMV. Every solve starts from x = 0 with a random b; iterations to --tol must match the
// one-GPU solve, and the true residual of the returned x is recomputed on the host (serial
// reference SpMV). Writes cg_bench.csv, cg_bench.json and summary.json into --out after every
// matrix; stops starting new matrices after --time-limit seconds.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/cg_multi.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/multi_device.hpp"
#include "bench_common.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "partitioners/partition_plan.hpp"
#include "testing/reference.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;
namespace fs = std::filesystem;

const char* kUsage =
    "usage: cg_bench [--gen SPEC]... [--matrices DIR] [--largest K] [--quick]\n"
    "                [--devices 0,1|all] [--precision float|double] [--tol T] [--max-iters N]\n"
    "                [--kernel K] [--time-limit SECONDS] [--out DIR]\n"
    "  --gen SPEC     an SPD generated matrix (kspmv::gen spec); repeatable; default: large\n"
    "                 stencils and a band matrix (small ones with --quick)\n"
    "  --matrices DIR also the K (--largest, default 2) largest symmetric Matrix Market files\n"
    "                 of DIR (not necessarily positive definite: CG may not converge)\n"
    "  --devices      devices of the N-GPU runs (default all; one GPU alone runs them as two\n"
    "                 virtual devices 0,0); the 1-GPU run uses the first\n"
    "  --tol          relative residual ||b - A x|| / ||b|| to reach (default 1e-6 double,\n"
    "                 1e-4 float); --max-iters caps each solve (default 10000)\n"
    "  --time-limit   no new matrix is started after this many seconds (default 170)\n";

struct Args {
  std::vector<std::string> gens;
  std::string matrices, out = ".", precision = "double", devices_text = "all";
  std::vector<int> devices;
  int largest = 2, max_iters = 10000;
  double tol = NAN, time_limit_s = 170;
  bool quick = false;
  Kernel kernel = Kernel::Auto;
};

Args parse(int argc, char** argv) {
  Args a;
  for (Arguments in(argc, argv, kUsage); in.next();) {
    const std::string& k = in.flag();
    if (k == "--gen")
      a.gens.push_back(in.value());
    else if (k == "--matrices")
      a.matrices = in.value();
    else if (k == "--largest")
      a.largest = std::max(0, std::stoi(in.value()));
    else if (k == "--quick")
      a.quick = true;
    else if (k == "--devices")
      a.devices_text = in.value();
    else if (k == "--precision")
      a.precision = parse_precision(in.value());
    else if (k == "--tol")
      a.tol = std::stod(in.value());
    else if (k == "--max-iters")
      a.max_iters = std::max(1, std::stoi(in.value()));
    else if (k == "--kernel")
      a.kernel = parse_kernel(in.value());
    else if (k == "--time-limit")
      a.time_limit_s = std::stod(in.value());
    else if (k == "--out")
      a.out = in.value();
    else
      in.unknown();
  }
  if (!std::isfinite(a.tol)) a.tol = a.precision == "float" ? 1e-4 : 1e-6;
  if (!(a.tol > 0)) throw InvalidArgument("--tol must be > 0");
  if (a.gens.empty())
    a.gens = a.quick ? std::vector<std::string>{"stencil27:n=40", "laplace2d:n=256",
                                                "banded:n=200000,bw=3"}
                     : std::vector<std::string>{"stencil27:n=160", "stencil7:n=256",
                                                "laplace2d:n=1024", "banded:n=8000000,bw=3"};
  a.devices = parse_device_list(a.devices_text, cuda::device_count());
  if (a.devices.size() == 1) a.devices.push_back(a.devices.front());  // two virtual devices
  return a;
}

// One CG variant: how the matrix is partitioned and the vectors exchanged.
struct Variant {
  const char* name;
  part::Scheme scheme;
  part::Exchange exchange;
  bool comp;
  bool one_gpu;
};
const Variant kVariants[] = {
    {"1gpu", part::Scheme::NZ, part::Exchange::AllGather, false, true},
    {"allgather-lra", part::Scheme::LRA, part::Exchange::AllGather, false, false},
    {"allgather-lra-rc", part::Scheme::LRARC, part::Exchange::AllGather, false, false},
    {"halo", part::Scheme::NZ, part::Exchange::Halo, false, false},
    {"comp", part::Scheme::LRA, part::Exchange::AllGather, true, false},
};

struct Result {
  std::string matrix, precision, variant, partition, exchange, kernels, note;
  Offset nnz = 0;
  int gpus = 1, iterations = 0, solves = 0;
  double ms_per_iteration = NAN, speedup = NAN, rel_residual = NAN, host_rel_residual = NAN,
         setup_ms = NAN, tol = NAN;
  bool converged = false, iterations_match = true, ok = true;
};

template <class S>
void bench_matrix(const std::string& name, const CsrMatrix<S>& a, const Args& args,
                  std::vector<Result>& out) {
  if (a.nrows != a.ncols) throw InvalidArgument(name + " is not square");
  const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  const std::vector<S> b = random_values<S>(a.nrows, std::hash<std::string>{}(name));
  std::vector<S> x(a.nrows), r(a.nrows);
  double bnorm = 0;
  for (S v : b) bnorm += double(v) * double(v);
  bnorm = std::sqrt(bnorm);
  const CgOptions options{args.tol, args.max_iters};
  const int nd = static_cast<int>(args.devices.size());
  double ms1 = NAN;
  int iters1 = -1;
  for (const Variant& v : kVariants) {
    Result res;
    res.matrix = name, res.precision = sizeof(S) == 4 ? "float" : "double", res.nnz = a.nnz();
    res.variant = v.name, res.partition = part::to_string(v.scheme);
    res.exchange = v.comp ? "allgather-comp" : to_string(v.exchange);
    res.gpus = v.one_gpu ? 1 : nd, res.tol = args.tol;
    std::cerr << "  " << res.variant << " (" << res.gpus << " GPU" << (res.gpus > 1 ? "s" : "")
              << ") ... " << std::flush;
    try {
      const auto t0 = Clock::now();
      const auto plan = part::partition(a.row_ptr.data(), a.nrows, a.ncols, {v.scheme, res.gpus});
      const std::vector<int> devices =
          v.one_gpu ? std::vector<int>{args.devices.front()} : args.devices;
      cuda::MultiDeviceSpmv<S> md(host, plan, {v.exchange, devices, args.kernel});
      res.setup_ms = ms_since(t0);
      for (Kernel k : md.block_kernels())
        res.kernels += std::string(res.kernels.empty() ? "" : "+") + to_string(k);
      // The first solve is checked; short solves are repeated (up to 0.3 s) for a stable time.
      double total_ms = 0;
      res.ms_per_iteration = std::numeric_limits<double>::infinity();
      do {
        std::fill(x.begin(), x.end(), S(0));
        const auto t1 = Clock::now();
        const CgResult cg = cuda::cg_multi(md, b.data(), x.data(), options, v.comp);
        total_ms += ms_since(t1);
        if (res.solves++ == 0)
          res.iterations = cg.iterations, res.converged = cg.converged,
          res.rel_residual = cg.relative_residual;
        if (cg.iterations > 0)
          res.ms_per_iteration = std::min(res.ms_per_iteration, cg.ms_per_iteration);
      } while (total_ms < 300 && res.solves < 10 && res.iterations > 0);
      // The true residual of the last x, on the host.
      r = b;
      reference::spmv(S(-1), a, x.data(), S(1), r.data());
      double rn = 0;
      for (S e : r) rn += double(e) * double(e);
      res.host_rel_residual = bnorm > 0 ? std::sqrt(rn) / bnorm : std::sqrt(rn);
      if (v.one_gpu) ms1 = res.ms_per_iteration, iters1 = res.iterations;
      res.speedup = ms1 / res.ms_per_iteration;
      res.iterations_match =
          iters1 >= 0 && std::abs(res.iterations - iters1) <= std::max(2, iters1 / 50);
      // Converged solves must hold their residual on the host; every variant must take the
      // iterations the one-GPU solve takes.
      res.ok = res.iterations_match && (!res.converged || res.host_rel_residual <= 10 * args.tol);
      if (!res.converged)
        res.note = "not converged in " + std::to_string(args.max_iters) + " iterations";
      std::cerr << res.iterations << " iterations, " << fmt(res.ms_per_iteration)
                << " ms/iteration, x" << fmt(res.speedup) << " vs 1 GPU, host residual "
                << fmt(res.host_rel_residual) << (res.converged ? "" : " (not converged)")
                << (res.ok ? "" : "  FAILED CHECK") << "\n";
    } catch (const DeviceOutOfMemory& e) {
      res.note = std::string("out of device memory: ") + e.what();
      std::cerr << res.note << "\n";
    } catch (const Error& e) {
      res.ok = false, res.note = e.what();
      std::cerr << "ERROR " << e.what() << "\n";
    }
    out.push_back(res);
  }
}

void write_outputs(const Args& args, const std::vector<Result>& results) {
  fs::create_directories(args.out);
  std::ofstream csv(fs::path(args.out) / "cg_bench.csv");
  csv << "matrix,nnz,precision,gpus,variant,partition,exchange,kernels,iterations,converged,"
         "iterations_match,ms_per_iteration,speedup_vs_1gpu,rel_residual,host_rel_residual,tol,"
         "setup_ms,solves,ok,note\n";
  for (const auto& r : results)
    csv << csv_field(r.matrix) << ',' << r.nnz << ',' << r.precision << ',' << r.gpus << ','
        << r.variant << ',' << r.partition << ',' << r.exchange << ',' << r.kernels << ','
        << r.iterations << ',' << r.converged << ',' << r.iterations_match << ','
        << fmt(r.ms_per_iteration) << ',' << fmt(r.speedup) << ',' << fmt(r.rel_residual) << ','
        << fmt(r.host_rel_residual) << ',' << fmt(r.tol) << ',' << fmt(r.setup_ms) << ','
        << r.solves << ',' << r.ok << ',' << csv_cell(r.note) << '\n';
  const std::string device = device_name(args.devices.front()), date = utc_date();
  const auto write_json = [&](const fs::path& path, bool full) {
    std::ofstream j(path);
    j << "{\"device\":" << json_str(device) << ",\"date\":" << json_str(date)
      << ",\"gpus\":" << args.devices.size() << ",\"tol\":" << json_num(args.tol)
      << ",\"max_iterations\":" << args.max_iters << ",\"results\":[";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      j << (i ? ",\n" : "\n") << "{\"matrix\":" << json_str(r.matrix) << ",\"nnz\":" << r.nnz
        << ",\"precision\":" << json_str(r.precision) << ",\"gpus\":" << r.gpus
        << ",\"variant\":" << json_str(r.variant) << ",\"partition\":" << json_str(r.partition)
        << ",\"exchange\":" << json_str(r.exchange) << ",\"iterations\":" << r.iterations
        << ",\"converged\":" << (r.converged ? "true" : "false")
        << ",\"ms_per_iteration\":" << json_num(r.ms_per_iteration)
        << ",\"speedup_vs_1gpu\":" << json_num(r.speedup)
        << ",\"host_rel_residual\":" << json_num(r.host_rel_residual)
        << ",\"ok\":" << (r.ok ? "true" : "false");
      if (full)
        j << ",\"kernels\":" << json_str(r.kernels)
          << ",\"iterations_match\":" << (r.iterations_match ? "true" : "false")
          << ",\"rel_residual\":" << json_num(r.rel_residual)
          << ",\"setup_ms\":" << json_num(r.setup_ms) << ",\"solves\":" << r.solves
          << ",\"note\":" << json_str(r.note);
      j << "}";
    }
    j << "\n]}\n";
  };
  write_json(fs::path(args.out) / "cg_bench.json", true);
  write_json(fs::path(args.out) / "summary.json", false);
}

int run(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const auto sources = generated_then_largest(args.gens, args.matrices, args.largest, true);
  std::cerr << "cg_bench: " << sources.size() << " matrices, devices";
  for (int d : args.devices) std::cerr << ' ' << d;
  std::cerr << ", tol " << args.tol << ", max " << args.max_iters << " iterations\n";
  const auto t0 = Clock::now();
  std::vector<Result> results;
  run_sources(
      sources, t0, args.time_limit_s,
      [&](const std::string& name, const std::string& path) {
        if (args.precision == "float")
          bench_matrix<float>(name, load_source_logged<float>(name, path, args.precision), args,
                              results);
        else
          bench_matrix<double>(name, load_source_logged<double>(name, path, args.precision), args,
                               results);
      },
      [&](const std::string& name, const std::string& what) {
        Result r;
        r.matrix = name, r.precision = args.precision, r.variant = "-", r.ok = false;
        r.note = what;
        results.push_back(r);
      },
      [&] { write_outputs(args, results); });  // a later failure keeps what was measured
  std::printf("%-24s %4s %-17s %6s %10s %7s %10s\n", "matrix", "gpus", "variant", "iters",
              "ms/iter", "x1gpu", "host_res");
  for (const auto& r : results)
    std::printf("%-24.24s %4d %-17s %6d %10.4f %7.2f %10.2e%s\n", r.matrix.c_str(), r.gpus,
                r.variant.c_str(), r.iterations, r.ms_per_iteration, r.speedup, r.host_rel_residual,
                r.ok ? "" : "  FAILED");
  const bool ok = std::all_of(results.begin(), results.end(), [](const Result& r) { return r.ok; });
  std::cerr << (ok ? "every CG variant matches the one-GPU solve\n" : "SOME RESULTS FAILED\n")
            << "total " << fmt(ms_since(t0) / 1e3) << " s\n";
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main("cg_bench", argc, argv, run);
}

// Multi-GPU conjugate gradients benchmark (Gao et al. 2024 §5.3, §6.5), every solve kspmv::cg
// on a kspmv::Operator: per SPD matrix, CG time per iteration on one GPU against N GPUs with
// AllGather over LRA and LRA+RC (vectors whole on every device, updated redundantly: the paper's
// iterative framework), Halo over NZ (each device its rows, dot products reduced across devices)
// and allgather-x over LRA (the CG(comp) baseline: each device's x entries sent to every other
// device before each SpMV), and Halo over NZ on as many of the devices as pay for themselves by
// the cost model (halo-chosen; gpus says how many). Every solve starts from x = 0 with a random
// b; iterations to --tol must match the one-GPU solve, and the true residual of the returned x is
// recomputed on the host (serial reference SpMV). Each row also has the operator's SpMV alone (a
// burst of --reps applies on its vectors, back to back as CG's are) and iteration_over_spmv, the
// CG iteration over that SpMV. Writes cg_bench.csv, cg_bench.json and summary.json into --out
// after every matrix; stops starting new matrices after --time-limit seconds. With --reorder, a
// one-GPU row on P A P^T (Options::reorder; CG in the permuted order) whose end_to_end_ms (set-up,
// the ordering included, and the first solve) sets against the 1gpu row's; --shift makes graphs
// that are not SPD (k-mer) SPD.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/solvers/cg.hpp"
#include "partitioners/partition_plan.hpp"
#include "testing/reference.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;

struct Args {  // read_args() sets every field
  std::vector<std::string> gens;
  std::string matrices, out, precision;
  std::vector<int> devices;
  int largest = 0, max_iters = 0, reps = 0;
  double tol = 0, time_limit_s = 0;
  Kernel kernel = Kernel::Auto;
  bool graphs = true, signals = true;
  Reorder reorder = Reorder::None;
  double shift = 0;
};

Args read_args(const ParsedArgs& in) {
  Args a;
  a.gens = in.all("gen");
  if (a.gens.empty())
    a.gens =
        in.flag("quick")
            ? std::vector<std::string>{"stencil27:n=40", "laplace2d:n=256", "banded:n=200000,bw=3"}
            : std::vector<std::string>{"stencil27:n=160", "stencil7:n=256", "laplace2d:n=1024",
                                       "banded:n=8000000,bw=3"};
  a.matrices = in.text("matrices", "");
  a.largest = static_cast<int>(in.integer("largest", 2, 0, 1000000));
  a.precision = in.choice("precision", "double", {"float", "double"});
  a.tol = in.number("tol", a.precision == "float" ? 1e-4 : 1e-6);
  if (!(a.tol > 0)) throw UsageError("--tol must be > 0");
  a.max_iters = static_cast<int>(in.integer("max-iters", 10000, 1, 1000000000));
  a.reps = static_cast<int>(in.integer("reps", 50, 1, 1000000));
  a.kernel = parse_kernel(in.text("kernel", "auto"));
  a.time_limit_s = in.number("time-limit", 170);
  a.out = in.text("out", ".");
  a.devices = cuda_devices(in.text("devices", "all"));
  a.graphs = in.choice("graphs", "on", {"on", "off"}) == "on";
  a.signals = in.choice("signals", "on", {"on", "off"}) == "on";
  a.reorder = parse_reorder(in.text("reorder", "none"));
  a.shift = in.number("shift", 0);
  if (!(a.shift >= 0)) throw UsageError("--shift must be >= 0");
  if (a.devices.size() == 1) a.devices.push_back(a.devices.front());  // two virtual devices
  return a;
}

// One CG variant: how the matrix is partitioned and the vectors exchanged.
struct Variant {
  const char* name;
  part::Scheme partition;
  part::Exchange exchange;
  bool one_gpu;
  int chunks = 1;          // nz: blocks per device (the halo hides under the blocks that need none)
  bool choose = false;     // as many of the devices as pay for themselves (Options::choose_devices)
  bool reordered = false;  // Options::reorder = --reorder (run only with one)
};
const Variant kVariants[] = {
    {"1gpu", part::Scheme::NZ, part::Exchange::AllGather, true},
    {"1gpu-reordered", part::Scheme::NZ, part::Exchange::AllGather, true, 1, false, true},
    {"allgather-lra", part::Scheme::LRA, part::Exchange::AllGather, false},
    {"allgather-lra-rc", part::Scheme::LRARC, part::Exchange::AllGather, false},
    {"halo", part::Scheme::NZ, part::Exchange::Halo, false},
    {"halo-c4", part::Scheme::NZ, part::Exchange::Halo, false, 4},
    {"comp", part::Scheme::LRA, part::Exchange::AllGatherX, false},
    {"halo-chosen", part::Scheme::NZ, part::Exchange::Halo, false, 1, true},
};

struct Result {
  std::string matrix, precision, variant, partition, exchange, kernels, note, reorder = "none";
  Offset nnz = 0;
  int gpus = 1, iterations = 0, solves = 0;
  double ms_per_iteration = NAN, speedup = NAN, rel_residual = NAN, host_rel_residual = NAN,
         setup_ms = NAN, tol = NAN, spmv_ms = NAN, iteration_over_spmv = NAN, reorder_ms = 0,
         end_to_end_ms = NAN;
  bool converged = false, iterations_match = true, ok = true;
};

// a with each diagonal entry set to shift + the absolute sum of its row's other entries: a
// symmetric matrix becomes SPD (diagonally dominant), the graph Laplacian of |A| plus shift*I.
template <class S>
CsrMatrix<S> shifted(const CsrMatrix<S>& a, double shift) {
  CsrMatrix<S> b(a.nrows, a.ncols, a.nnz() + a.nrows);
  Offset at = 0;
  for (Ordinal i = 0; i < a.nrows; ++i) {
    b.row_ptr(i) = at;
    const Offset diag = at++;
    double sum = shift;
    for (Offset p = a.row_ptr(i); p < a.row_ptr(i + 1); ++p) {
      if (a.col_idx(p) == i) continue;
      sum += std::abs(double(a.values(p)));
      b.col_idx(at) = a.col_idx(p), b.values(at++) = a.values(p);
    }
    b.col_idx(diag) = i, b.values(diag) = S(sum);
  }
  b.row_ptr(a.nrows) = at;
  return b;
}

template <class S>
void bench_matrix(const std::string& name, const CsrMatrix<S>& given, const Args& args,
                  std::vector<Result>& out) {
  if (given.nrows != given.ncols) throw InvalidArgument(name + " is not square");
  const CsrMatrix<S> a = args.shift > 0 ? shifted(given, args.shift) : given;
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
    if (v.reordered && args.reorder == Reorder::None) continue;
    Result res;
    res.matrix = name, res.precision = precision_name<S>(), res.nnz = a.nnz();
    res.variant = v.name, res.partition = part::to_string(v.partition);
    res.exchange = part::to_string(v.exchange);
    res.gpus = v.one_gpu ? 1 : nd, res.tol = args.tol;
    std::cerr << "  " << res.variant << " (" << res.gpus << " GPU" << (res.gpus > 1 ? "s" : "")
              << ") ... " << std::flush;
    try {
      Options o;
      o.backend = Backend::Cuda, o.kernel = args.kernel, o.validate = false;
      o.devices = v.one_gpu ? std::vector<int>{args.devices.front()} : args.devices;
      o.partition = v.partition, o.exchange = v.exchange, o.tune_partition = false;
      o.chunks = v.chunks, o.choose_devices = v.choose, o.graphs = args.graphs;
      o.signals = args.signals;
      if (v.reordered) o.reorder = args.reorder;  // CG runs in the permuted order
      o.permuted_applies = v.reordered && args.reorder == Reorder::Auto;
      const auto t0 = Clock::now();
      Operator<S> op(a, o);
      res.setup_ms = ms_since(t0);
      res.reorder = to_string(op.reorder()), res.reorder_ms = op.timings().reorder_ms;
      res.gpus = static_cast<int>(op.options().devices.size());
      if (res.gpus == 1) {
        res.kernels = to_string(op.kernel());
      } else {
        for (const PartInfo& p : op.parts())
          res.kernels += std::string(res.kernels.empty() ? "" : "+") + to_string(p.kernel);
      }
      {  // the SpMV alone, on the operator's vectors
        const auto dx = op.make_vector(), dy = op.make_vector();
        op.upload(b.data(), a.ncols, dx);
        res.spmv_ms = burst_ms(op, dx, dy, args.reps);
      }
      // The first solve is checked; short solves are repeated (up to 0.3 s) for a stable time.
      double total_ms = 0;
      res.ms_per_iteration = std::numeric_limits<double>::infinity();
      do {
        std::fill(x.begin(), x.end(), S(0));
        const auto t1 = Clock::now();
        const CgResult cgr = cg(op, b.data(), x.data(), options);
        total_ms += ms_since(t1);
        if (res.solves++ == 0)
          res.iterations = cgr.iterations, res.converged = cgr.converged,
          res.rel_residual = cgr.relative_residual, res.note = cgr.replay,
          res.end_to_end_ms = res.setup_ms + total_ms;
        if (cgr.iterations > 0)
          res.ms_per_iteration = std::min(res.ms_per_iteration, cgr.ms_per_iteration);
      } while (total_ms < 300 && res.solves < 10 && res.iterations > 0);
      res.iteration_over_spmv = res.ms_per_iteration / res.spmv_ms;
      // The true residual of the last x, on the host.
      r = b;
      reference::spmv(S(-1), a, x.data(), S(1), r.data());
      double rn = 0;
      for (S e : r) rn += double(e) * double(e);
      res.host_rel_residual = bnorm > 0 ? std::sqrt(rn) / bnorm : std::sqrt(rn);
      if (v.one_gpu && !v.reordered) ms1 = res.ms_per_iteration, iters1 = res.iterations;
      res.speedup = ms1 / res.ms_per_iteration;
      res.iterations_match =
          iters1 >= 0 && std::abs(res.iterations - iters1) <= std::max(2, iters1 / 50);
      // Converged solves must hold their residual on the host; every variant must take the
      // iterations the one-GPU solve takes.
      res.ok = res.iterations_match && (!res.converged || res.host_rel_residual <= 10 * args.tol);
      if (!res.converged)
        res.note =
            "not converged in " + std::to_string(args.max_iters) + " iterations; " + res.note;
      std::cerr << res.iterations << " iterations, " << fmt(res.ms_per_iteration)
                << " ms/iteration (" << fmt(res.iteration_over_spmv) << " SpMVs), x"
                << fmt(res.speedup) << " vs 1 GPU, host residual " << fmt(res.host_rel_residual)
                << (res.converged ? "" : " (not converged)") << (res.ok ? "" : "  FAILED CHECK")
                << (res.note.empty() ? "" : "; " + res.note) << "\n";
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

// The CSV columns and the JSON of a result, in order.
Record record(const Result& r) {
  return {{"matrix", r.matrix},
          {"nnz", r.nnz},
          {"precision", r.precision},
          {"gpus", r.gpus},
          {"variant", r.variant},
          {"partition", r.partition},
          {"exchange", r.exchange},
          {"kernels", r.kernels},
          {"iterations", r.iterations},
          {"converged", r.converged},
          {"iterations_match", r.iterations_match},
          {"ms_per_iteration", r.ms_per_iteration},
          {"spmv_ms", r.spmv_ms},
          {"iteration_over_spmv", r.iteration_over_spmv},
          {"speedup_vs_1gpu", r.speedup},
          {"rel_residual", r.rel_residual},
          {"host_rel_residual", r.host_rel_residual},
          {"tol", r.tol},
          {"setup_ms", r.setup_ms},
          {"reorder", r.reorder},
          {"reorder_ms", r.reorder_ms},
          {"end_to_end_ms", r.end_to_end_ms},
          {"solves", r.solves},
          {"ok", r.ok},
          {"note", r.note}};
}

void write_outputs(const Args& args, const std::vector<Result>& results) {
  std::vector<Record> rows;
  for (const Result& r : results) rows.push_back(record(r));
  const Record header = {{"device", device_name(args.devices.front())},
                         {"date", utc_date()},
                         {"gpus", args.devices.size()},
                         {"tol", args.tol},
                         {"max_iterations", args.max_iters},
                         {"graphs", args.graphs},
                         {"signals", args.signals}};
  write_results(args.out, "cg_bench", header, rows, rows,
                {"matrix", "nnz", "precision", "gpus", "variant", "partition", "exchange",
                 "iterations", "converged", "ms_per_iteration", "iteration_over_spmv",
                 "speedup_vs_1gpu", "host_rel_residual", "end_to_end_ms", "ok"});
}

// The one-time costs of a process (the CUDA context, the libraries and the kernels loaded on
// first use) paid on a small matrix before any timed set-up, plain and reordered, with a short
// CG each: each row's set-up and end_to_end_ms are then its own.
template <class S>
void warm_up(const Args& args) {
  const auto a = gen::laplace2d<S>(256, 256);
  const std::vector<S> b(a.nrows, S(1));
  for (const Reorder r : {Reorder::None, Reorder::Bfs}) {
    Options o;
    o.backend = Backend::Cuda, o.kernel = args.kernel, o.devices = {args.devices.front()};
    o.reorder = r;
    Operator<S> op(a, o);
    std::vector<S> x(a.nrows);
    cg(op, b.data(), x.data(), {1e-6, 20});
  }
}

int run(const ParsedArgs& parsed) {
  const Args args = read_args(parsed);
  if (args.precision == "float")
    warm_up<float>(args);
  else
    warm_up<double>(args);
  const auto sources = generated_then_largest(args.gens, args.matrices, args.largest, true);
  std::cerr << "cg_bench: " << sources.size() << " matrices, devices";
  for (int d : args.devices) std::cerr << ' ' << d;
  std::cerr << ", tol " << args.tol << ", max " << args.max_iters << " iterations\n";
  const auto t0 = Clock::now();
  std::vector<Result> results;
  run_sources(
      sources, {args.precision}, t0, args.time_limit_s,
      [&](const std::string& name, const std::string&, const auto& a) {
        bench_matrix(name, a, args, results);
      },
      [&](const std::string& name, const std::string& precision, const std::string& what) {
        Result r;
        r.matrix = name, r.precision = precision, r.variant = "-", r.ok = false, r.note = what;
        results.push_back(r);
      },
      [&] { write_outputs(args, results); });  // a later failure keeps what was measured
  std::printf("%-24s %4s %-17s %6s %10s %9s %7s %10s\n", "matrix", "gpus", "variant", "iters",
              "ms/iter", "it/spmv", "x1gpu", "host_res");
  for (const auto& r : results)
    std::printf("%-24.24s %4d %-17s %6d %10.4f %9.3f %7.2f %10.2e%s\n", r.matrix.c_str(), r.gpus,
                r.variant.c_str(), r.iterations, r.ms_per_iteration, r.iteration_over_spmv,
                r.speedup, r.host_rel_residual, r.ok ? "" : "  FAILED");
  const bool ok = std::all_of(results.begin(), results.end(), [](const Result& r) { return r.ok; });
  std::cerr << (ok ? "every CG variant matches the one-GPU solve\n" : "SOME RESULTS FAILED\n")
            << "total " << fmt(ms_since(t0) / 1e3) << " s\n";
  return ok ? 0 : 1;
}

Command command() {
  Command c;
  c.name = "cg_bench";
  c.program = "";
  c.description =
      "Multi-GPU conjugate gradients per SPD matrix (kspmv::cg on an Operator): time per\n"
      "iteration on one GPU against N GPUs with AllGather over LRA and LRA+RC, Halo over NZ and\n"
      "the CG(comp) baseline (allgather-x), and over one SpMV of the same operator; iterations\n"
      "must match the one-GPU solve. Writes cg_bench.csv, cg_bench.json and summary.json into\n"
      "--out.";
  c.options = {
      {"gen", "SPEC",
       "an SPD generated matrix (kspmv::gen spec); repeatable; default: large stencils and a "
       "band matrix (small ones with --quick)"},
      {"quick", "", "the small default set"},
      {"matrices", "DIR",
       "also the K (--largest) largest symmetric Matrix Market files of DIR (not necessarily "
       "positive definite: CG may not converge)"},
      {"largest", "K", "default 2"},
      {"devices", "0,1|all",
       "devices of the N-GPU runs (default all; one GPU alone runs them as two virtual devices "
       "0,0); the 1-GPU run uses the first"},
      {"precision", "float|double", "default double"},
      {"tol", "T",
       "relative residual ||b - A x|| / ||b|| to reach (default 1e-6 double, 1e-4 float)"},
      {"max-iters", "N", "iteration cap of each solve (default 10000)"},
      {"reps", "N", "SpMVs of each operator alone, back to back (default 50)"},
      {"kernel", "K", "single-GPU kernel of every block (default auto)"},
      {"graphs", "on|off",
       "replay each iteration as a CUDA graph (default on; off: enqueued step by step)"},
      {"signals", "on|off",
       "halo on distinct GPUs ordered by flags the GPUs raise (default on; off: by events)"},
      {"time-limit", "SECONDS", "no new matrix is started after this many seconds (default 170)"},
      {"reorder", "none|auto|rcm|degree|bfs|stripes",
       "also a one-GPU row on the reordered matrix (Options::reorder; default none)"},
      {"shift", "S",
       "set each diagonal to S + its row's other absolute values, so that symmetric graphs "
       "(k-mer) are SPD (default 0: the matrices as they are)"},
      kOutOption,
  };
  c.run = run;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

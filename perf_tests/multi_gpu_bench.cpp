// Multi-GPU SpMV benchmark (Gao et al. 2024 §6; MSREP §5): per matrix, the best single-GPU
// kernel on one GPU against N GPUs with each partition scheme (rows, NZ, 2NZ, LRA, LRA+RC,
// pCSR) under every exchange that applies (allgather, merge, halo) and under auto (the
// executor times the candidates for a single apply and keeps the fastest). Per case: median over
// --reps event-timed applies on device vectors of the slowest device's total, kernel and
// exchange milliseconds; speedup over one GPU; the speedup bound that the peer bandwidth
// measured in this run implies; partitioning, executor setup and (Halo) the halo column setup in
// units of one single-GPU SpMV; relative l2 error against the host reference (y poisoned with
// NaN). Writes multi_gpu_bench.csv, multi_gpu_bench.json and summary.json into --out after every
// matrix; stops starting new matrices after --time-limit seconds.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/memory.hpp"
#include "backends/cuda/multi_device.hpp"
#include "bench_common.hpp"
#include "partitioners/partition_plan.hpp"
#include "testing/reference.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;

struct Args {  // read_args() sets every field
  std::vector<std::string> gens;
  std::vector<int> devices;
  int reps = 0, largest = 0;
  double time_limit_s = 0;
  std::string precision, out, matrices;
  Kernel kernel = Kernel::Auto;
};

Args read_args(const ParsedArgs& in) {
  Args a;
  a.gens = in.all("gen");
  if (a.gens.empty()) a.gens = family_specs(in.flag("quick"));
  a.matrices = in.text("matrices", "");
  a.largest = static_cast<int>(in.integer("largest", 3, 0, 1000000));
  a.reps = static_cast<int>(in.integer("reps", 20, 1, 1000000));
  a.precision = in.choice("precision", "double", {"float", "double"});
  a.kernel = parse_kernel(in.text("kernel", "auto"));
  a.time_limit_s = in.number("time-limit", 150);
  a.out = in.text("out", ".");
  a.devices = cuda_devices(in.text("devices", "all"));
  return a;
}

struct Result {
  std::string matrix, precision, kernel, partition = "-", exchange = "-", note;
  Offset nnz = 0;
  int gpus = 1;
  double ms = NAN, kernel_ms = NAN, exchange_ms = NAN, gbps = NAN, speedup = NAN, bound = NAN,
         partition_cost = NAN, setup_cost = NAN, halo_setup_cost = NAN, rel_error = NAN;
  std::size_t exchange_bytes = 0;
  bool ok = true;
};

template <class S>
void bench_matrix(const std::string& name, const CsrMatrix<S>& a, const Args& args,
                  const PeerBandwidth& bw, std::vector<Result>& out) {
  const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  const Offset nnz = a.nnz();
  const double bytes = effective_bytes(a);
  const std::vector<S> x = random_values<S>(a.ncols, std::hash<std::string>{}(name));
  std::vector<S> ref(a.nrows), y(a.nrows);
  reference::spmv(S(1), a, x.data(), S(0), ref.data());
  const std::vector<S> nan(a.nrows, std::numeric_limits<S>::quiet_NaN());
  const auto base = [&] {
    Result r;
    r.matrix = name, r.precision = precision_name<S>(), r.nnz = nnz;
    return r;
  };

  // One GPU: the fastest single-GPU kernel on the whole matrix.
  double t1 = NAN;
  {
    Result r = base();
    const int dev = args.devices.front();
    cuda::DeviceGuard guard(dev);
    auto d = std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(host));
    cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
    dx.upload(x.data());
    cuda::Stream s;
    for (Kernel k :
         {Kernel::Cusparse, Kernel::CsrVector, Kernel::PartialOverlap, Kernel::Seg, Kernel::SegR}) {
      try {
        auto spmv = cuda::make_device_spmv(k, d, host);
        const double err = poisoned_error(*spmv, dx, dy, ref, s.get());
        const double t = time_ms([&] { spmv->run(S(1), dx.data(), S(0), dy.data(), s.get()); },
                                 s.get(), args.reps);
        if (!(t >= r.ms)) r.ms = t, r.kernel = to_string(k), r.rel_error = err;
      } catch (const Error& e) {
        std::cerr << "  1 GPU " << to_string(k) << ": " << e.what() << "\n";
      }
    }
    t1 = r.ms;
    r.kernel_ms = r.ms, r.exchange_ms = 0, r.speedup = 1, r.gbps = bytes / (r.ms * 1e6);
    r.ok = r.rel_error <= reference::tolerance<S>();
    std::cerr << "  1 GPU best " << r.kernel << ": " << fmt(r.ms) << " ms\n";
    out.push_back(r);
  }

  const int nd = static_cast<int>(args.devices.size());
  for (part::Scheme scheme : {part::Scheme::Rows, part::Scheme::NZ, part::Scheme::TwoNZ,
                              part::Scheme::LRA, part::Scheme::LRARC, part::Scheme::PCSR}) {
    auto t0 = Clock::now();
    const auto plan = part::partition(a.row_ptr.data(), a.nrows, a.ncols, {scheme, nd});
    const double partition_ms = ms_since(t0);
    for (part::Exchange ex : {part::Exchange::AllGather, part::Exchange::Merge,
                              part::Exchange::Halo, part::Exchange::Auto}) {
      if (!part::exchange_applies(scheme, ex)) continue;
      if (ex == part::Exchange::Auto && part::exchange_candidates(scheme).size() < 2) continue;
      Result r = base();
      r.gpus = nd, r.partition = part::to_string(scheme), r.exchange = to_string(ex);
      r.kernel = to_string(args.kernel);
      r.partition_cost = partition_ms / t1;
      std::cerr << "  " << nd << " GPUs " << r.partition << " " << r.exchange << " ... "
                << std::flush;
      try {
        t0 = Clock::now();
        cuda::MultiDeviceSpmv<S> md(host, plan,
                                    {ex, args.devices, args.kernel, part::ExchangeUse::Apply});
        r.setup_cost = ms_since(t0) / t1;
        if (md.exchange() == part::Exchange::Halo) r.halo_setup_cost = md.halo_setup_ms() / t1;
        r.exchange_bytes = md.exchange_bytes();
        auto dx = md.make_vector(), dy = md.make_vector();
        md.upload(x.data(), a.ncols, dx);
        md.upload(nan.data(), a.nrows, dy);
        md.apply(S(1), dx, S(0), dy);
        md.download(dy, a.nrows, y.data());
        r.rel_error = reference::rel_l2_error(y.data(), ref.data(), y.size());
        r.ok = r.rel_error <= reference::tolerance<S>();
        std::vector<double> total, kern, exch;
        for (int i = 0; i < args.reps + 3; ++i) {
          md.apply(S(1), dx, S(0), dy);
          if (i < 3) continue;
          double t = 0, k = 0, e = 0;  // the slowest device
          for (const auto& dt : md.timings())
            t = std::max(t, dt.total_ms), k = std::max(k, dt.kernel_ms),
            e = std::max(e, dt.exchange_ms);
          total.push_back(t), kern.push_back(k), exch.push_back(e);
        }
        r.ms = median(total), r.kernel_ms = median(kern), r.exchange_ms = median(exch);
        r.gbps = bytes / (r.ms * 1e6);
        r.speedup = t1 / r.ms;
        // Perfect kernel scaling plus each device receiving its share of the exchanged bytes
        // at the bidirectional peer bandwidth per direction.
        const double per_dir = std::isfinite(bw.both) ? bw.both / 2 : NAN;
        r.bound = t1 / (t1 / nd + (r.exchange_bytes / double(nd)) / (per_dir * 1e6));
        std::string kernels;
        for (Kernel k : md.block_kernels())
          kernels += std::string(kernels.empty() ? "" : "+") + to_string(k);
        r.note = "blocks: " + kernels;
        if (ex == part::Exchange::Auto) {
          r.note += "; auto chose " + std::string(to_string(md.exchange())) + " of";
          for (const auto& t : md.exchange_trials())
            r.note += std::string(" ") + to_string(t.exchange) + "=" + fmt(t.ms) + "ms";
        }
        std::cerr << fmt(r.ms) << " ms (kernel " << fmt(r.kernel_ms) << ", exchange "
                  << fmt(r.exchange_ms) << "), x" << fmt(r.speedup) << " (bound " << fmt(r.bound)
                  << "), err " << fmt(r.rel_error) << (r.ok ? "" : "  FAILED CHECK") << "\n";
      } catch (const DeviceOutOfMemory& e) {
        r.note = std::string("out of device memory: ") + e.what();
        std::cerr << r.note << "\n";
      } catch (const Error& e) {
        r.ok = false, r.note = e.what();
        std::cerr << "ERROR " << e.what() << "\n";
      }
      out.push_back(r);
    }
  }
}

// The CSV columns and the JSON of a result, in order.
Record record(const Result& r) {
  return {{"matrix", r.matrix},
          {"nnz", r.nnz},
          {"precision", r.precision},
          {"gpus", r.gpus},
          {"partition", r.partition},
          {"exchange", r.exchange},
          {"kernel", r.kernel},
          {"ms", r.ms},
          {"kernel_ms", r.kernel_ms},
          {"exchange_ms", r.exchange_ms},
          {"gbps", r.gbps},
          {"speedup_vs_1gpu", r.speedup},
          {"speedup_bound", r.bound},
          {"exchange_bytes", r.exchange_bytes},
          {"partition_cost_spmvs", r.partition_cost},
          {"setup_cost_spmvs", r.setup_cost},
          {"halo_setup_cost_spmvs", r.halo_setup_cost},
          {"rel_error", r.rel_error},
          {"ok", r.ok},
          {"note", r.note}};
}

void write_outputs(const Args& args, const std::vector<Result>& results, const PeerBandwidth& bw) {
  std::vector<Record> rows;
  for (const Result& r : results) rows.push_back(record(r));
  const Record header = {{"device", device_name(args.devices.front())},
                         {"date", utc_date()},
                         {"gpus", args.devices.size()},
                         {"peer_gbps_0_to_1", bw.to_1},
                         {"peer_gbps_1_to_0", bw.to_0},
                         {"peer_gbps_both", bw.both}};
  write_results(
      args.out, "multi_gpu_bench", header, rows, rows,
      {"matrix", "nnz", "precision", "kernel", "gpus", "partition", "exchange", "ms", "gbps",
       "speedup_vs_1gpu", "exchange_ms", "partition_cost_spmvs", "setup_cost_spmvs",
       "halo_setup_cost_spmvs", "kernel_ms", "speedup_bound", "rel_error", "ok"});
}

int run(const ParsedArgs& parsed) {
  const Args args = read_args(parsed);
  const auto t0 = Clock::now();
  PeerBandwidth bw;
  const auto [d0, d1] = first_pair(args.devices);
  if (d1 >= 0) {
    bw = peer_bandwidth(d0, d1, args.reps);
    std::cerr << "peer copy GB/s: " << fmt(bw.to_1) << " (" << d0 << "->" << d1 << "), "
              << fmt(bw.to_0) << " (" << d1 << "->" << d0 << "), " << fmt(bw.both)
              << " (both at once)\n";
  }
  std::vector<Result> results;
  run_sources(
      generated_then_largest(args.gens, args.matrices, args.largest, false), {args.precision}, t0,
      args.time_limit_s,
      [&](const std::string& name, const std::string&, const auto& a) {
        bench_matrix(name, a, args, bw, results);
      },
      [&](const std::string& name, const std::string& precision, const std::string& what) {
        Result r;
        r.matrix = name, r.precision = precision, r.kernel = "-", r.ok = false, r.note = what;
        results.push_back(r);
      },
      [&] { write_outputs(args, results, bw); });  // a later failure keeps what was measured
  std::printf("%-26s %4s %-7s %-9s %9s %9s %9s %7s %7s %9s\n", "matrix", "gpus", "part", "exchange",
              "ms", "kern_ms", "exch_ms", "x1gpu", "bound", "rel_err");
  for (const auto& r : results)
    std::printf("%-26.26s %4d %-7s %-9s %9.4f %9.4f %9.4f %7.2f %7.2f %9.2e%s\n", r.matrix.c_str(),
                r.gpus, r.partition.c_str(), r.exchange.c_str(), r.ms, r.kernel_ms, r.exchange_ms,
                r.speedup, r.bound, r.rel_error, r.ok ? "" : "  FAILED");
  const bool ok = std::all_of(results.begin(), results.end(), [](const Result& r) { return r.ok; });
  std::cerr << (ok ? "all results match the reference\n" : "SOME RESULTS FAILED\n") << "total "
            << fmt(ms_since(t0) / 1e3) << " s\n";
  return ok ? 0 : 1;
}

Command command() {
  Command c;
  c.name = "multi_gpu_bench";
  c.program = "";
  c.description =
      "Multi-GPU SpMV per matrix: the best single-GPU kernel against every partition scheme and\n"
      "exchange on --devices, with the speedup bound the measured peer bandwidth implies and the\n"
      "setup costs. Writes multi_gpu_bench.csv, multi_gpu_bench.json and summary.json into --out.";
  c.options = {
      {"gen", "SPEC",
       "a generated matrix (kspmv::gen spec); repeatable; default: the large families, >= 5e7 "
       "non-zeros each (small ones with --quick)"},
      {"quick", "", "the small default families"},
      {"matrices", "DIR", "also the K (--largest) largest Matrix Market files of DIR"},
      {"largest", "K", "default 3"},
      {"devices", "0,1|all",
       "CUDA devices of the multi-GPU runs (default: all; a device may be repeated to exercise "
       "the exchanges on one GPU)"},
      {"reps", "N", "event-timed runs (default 20)"},
      {"precision", "float|double", "default double"},
      {"kernel", "K", "single-GPU kernel of every block (default auto)"},
      {"time-limit", "SECONDS", "no new matrix is started after this many seconds (default 150)"},
      kOutOption,
  };
  c.run = run;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

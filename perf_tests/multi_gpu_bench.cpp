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
#include <chrono>
#include <cmath>
#include <cstdio>
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
#include <utility>
#include <vector>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/memory.hpp"
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
    "usage: multi_gpu_bench [--gen SPEC]... [--matrices DIR] [--largest K] [--quick]\n"
    "                       [--devices 0,1|all] [--reps N] [--precision float|double]\n"
    "                       [--kernel K] [--time-limit SECONDS] [--out DIR]\n"
    "  --gen SPEC     a generated matrix (kspmv::gen spec); repeatable; default: the large\n"
    "                 families, >= 5e7 non-zeros each (small ones with --quick)\n"
    "  --matrices DIR also the K (--largest, default 3) largest Matrix Market files of DIR\n"
    "  --devices      CUDA devices of the multi-GPU runs (default: all; a device may be\n"
    "                 repeated to exercise the exchanges on one GPU)\n"
    "  --kernel       single-GPU kernel of every block (default auto)\n"
    "  --time-limit   no new matrix is started after this many seconds (default 150)\n";

struct Args {
  std::vector<std::string> gens;
  std::vector<int> devices;
  bool quick = false;
  int reps = 20, largest = 3;
  double time_limit_s = 150;
  std::string precision = "double", out = ".", matrices, devices_text = "all";
  Kernel kernel = Kernel::Auto;
};

Args parse(int argc, char** argv) {
  Args a;
  for (Arguments in(argc, argv, kUsage); in.next();) {
    const std::string& k = in.flag();
    if (k == "--gen")
      a.gens.push_back(in.value());
    else if (k == "--quick")
      a.quick = true;
    else if (k == "--devices")
      a.devices_text = in.value();
    else if (k == "--matrices")
      a.matrices = in.value();
    else if (k == "--largest")
      a.largest = std::max(0, std::stoi(in.value()));
    else if (k == "--time-limit")
      a.time_limit_s = std::stod(in.value());
    else if (k == "--reps")
      a.reps = std::max(1, std::stoi(in.value()));
    else if (k == "--precision")
      a.precision = parse_precision(in.value());
    else if (k == "--kernel")
      a.kernel = parse_kernel(in.value());
    else if (k == "--out")
      a.out = in.value();
    else
      in.unknown();
  }
  if (a.gens.empty()) a.gens = family_specs(a.quick);
  a.devices = parse_device_list(a.devices_text, cuda::device_count());
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
  const double bytes = bytes_moved(a);
  const std::vector<S> x = random_values<S>(a.ncols, std::hash<std::string>{}(name));
  std::vector<S> ref(a.nrows), y(a.nrows);
  reference::spmv(S(1), a, x.data(), S(0), ref.data());
  const std::vector<S> nan(a.nrows, std::numeric_limits<S>::quiet_NaN());
  const auto base = [&] {
    Result r;
    r.matrix = name, r.precision = sizeof(S) == 4 ? "float" : "double", r.nnz = nnz;
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
    cuda::Event e0, e1;
    for (Kernel k :
         {Kernel::Cusparse, Kernel::CsrVector, Kernel::PartialOverlap, Kernel::Seg, Kernel::SegR}) {
      try {
        auto spmv = cuda::make_device_spmv(k, d, host);
        dy.upload(nan.data());
        spmv->run(S(1), dx.data(), S(0), dy.data(), s.get());
        s.synchronize();
        dy.download(y.data());
        const double err = reference::rel_l2_error(y.data(), ref.data(), y.size());
        std::vector<double> ms;
        for (int i = 0; i < args.reps + 3; ++i) {
          e0.record(s.get());
          spmv->run(S(1), dx.data(), S(0), dy.data(), s.get());
          e1.record(s.get());
          e1.synchronize();
          if (i >= 3) ms.push_back(e1.elapsed_since(e0));
        }
        const double t = median(ms);
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

void write_outputs(const Args& args, const std::vector<Result>& results, const PeerBandwidth& bw) {
  fs::create_directories(args.out);
  std::ofstream csv(fs::path(args.out) / "multi_gpu_bench.csv");
  csv << "matrix,nnz,precision,gpus,partition,exchange,kernel,ms,kernel_ms,exchange_ms,gbps,"
         "speedup_vs_1gpu,speedup_bound,exchange_bytes,partition_cost_spmvs,setup_cost_spmvs,"
         "halo_setup_cost_spmvs,rel_error,ok,note\n";
  for (const auto& r : results) {
    const std::string note = csv_cell(r.note);
    csv << csv_field(r.matrix) << ',' << r.nnz << ',' << r.precision << ',' << r.gpus << ','
        << r.partition << ',' << r.exchange << ',' << r.kernel << ',' << fmt(r.ms) << ','
        << fmt(r.kernel_ms) << ',' << fmt(r.exchange_ms) << ',' << fmt(r.gbps) << ','
        << fmt(r.speedup) << ',' << fmt(r.bound) << ',' << r.exchange_bytes << ','
        << fmt(r.partition_cost) << ',' << fmt(r.setup_cost) << ',' << fmt(r.halo_setup_cost) << ','
        << fmt(r.rel_error) << ',' << (r.ok ? 1 : 0) << ',' << note << '\n';
  }
  const std::string device = device_name(args.devices.front()), date = utc_date();
  auto write_json = [&](const fs::path& path, bool full) {
    std::ofstream j(path);
    j << "{\"device\":" << json_str(device) << ",\"date\":" << json_str(date)
      << ",\"gpus\":" << args.devices.size() << ",\"peer_gbps_0_to_1\":" << json_num(bw.to_1)
      << ",\"peer_gbps_1_to_0\":" << json_num(bw.to_0)
      << ",\"peer_gbps_both\":" << json_num(bw.both) << ",\"results\":[";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      j << (i ? ",\n" : "\n") << "{\"matrix\":" << json_str(r.matrix) << ",\"nnz\":" << r.nnz
        << ",\"precision\":" << json_str(r.precision) << ",\"kernel\":" << json_str(r.kernel)
        << ",\"gpus\":" << r.gpus << ",\"partition\":" << json_str(r.partition)
        << ",\"exchange\":" << json_str(r.exchange) << ",\"ms\":" << json_num(r.ms)
        << ",\"gbps\":" << json_num(r.gbps) << ",\"speedup_vs_1gpu\":" << json_num(r.speedup)
        << ",\"exchange_ms\":" << json_num(r.exchange_ms)
        << ",\"partition_cost_spmvs\":" << json_num(r.partition_cost)
        << ",\"setup_cost_spmvs\":" << json_num(r.setup_cost)
        << ",\"halo_setup_cost_spmvs\":" << json_num(r.halo_setup_cost)
        << ",\"kernel_ms\":" << json_num(r.kernel_ms) << ",\"speedup_bound\":" << json_num(r.bound)
        << ",\"rel_error\":" << json_num(r.rel_error) << ",\"ok\":" << (r.ok ? "true" : "false");
      if (full) {
        j << ",\"exchange_bytes\":" << r.exchange_bytes << ",\"note\":" << json_str(r.note);
      }
      j << "}";
    }
    j << "\n]}\n";
  };
  write_json(fs::path(args.out) / "multi_gpu_bench.json", true);
  write_json(fs::path(args.out) / "summary.json", false);
}

int run(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const auto t0 = Clock::now();
  PeerBandwidth bw;
  const auto [d0, d1] = first_pair(args.devices);
  if (d1 >= 0) {
    bw = peer_bandwidth(d0, d1, args.reps);
    std::cerr << "peer copy GB/s: " << fmt(bw.to_1) << " (" << d0 << "->" << d1 << "), "
              << fmt(bw.to_0) << " (" << d1 << "->" << d0 << "), " << fmt(bw.both)
              << " (both at once)\n";
  }
  const auto sources = generated_then_largest(args.gens, args.matrices, args.largest, false);
  std::vector<Result> results;
  run_sources(
      sources, t0, args.time_limit_s,
      [&](const std::string& name, const std::string& path) {
        if (args.precision == "float")
          bench_matrix<float>(name, load_source_logged<float>(name, path, args.precision), args, bw,
                              results);
        else
          bench_matrix<double>(name, load_source_logged<double>(name, path, args.precision), args,
                               bw, results);
      },
      [&](const std::string& name, const std::string& what) {
        Result r;
        r.matrix = name, r.precision = args.precision, r.kernel = "-", r.ok = false;
        r.note = what;
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

}  // namespace

int main(int argc, char** argv) {
  return bench_main("multi_gpu_bench", argc, argv, run);
}

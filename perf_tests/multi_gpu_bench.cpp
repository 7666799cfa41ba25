// Multi-GPU SpMV benchmark (Gao et al. 2024 §6; MSREP §5), every run through kspmv::Operator:
// per matrix, the best single-GPU kernel on one GPU against N GPUs with each partition scheme
// (rows, NZ, 2NZ, LRA, LRA+RC, pCSR, pCOO) under every exchange that applies (allgather, merge,
// halo) and under auto (the tuner times the three), and LRA / LRA+RC once more with their
// (d_l, d_c) tuner ("lra-tuned", what it tried and kept in the note), and NZ in kChunks blocks a
// device ("nz-c4": the exchange under the kernels) with allgather, halo and auto, and NZ with
// auto on as many devices as the cost model chooses. Per case: the median over --reps applies on
// the operator's distributed vectors of the slowest device's total, kernel and exchange
// milliseconds (its events), the time beyond the kernels in microseconds, the host's time in the
// call to apply, and the milliseconds per apply of a burst of --reps applies back to back (host
// clock); whether the applies were replayed as CUDA graphs and whether their devices ordered the
// exchange by flags (signalled); the speedup over one GPU; the bound
// the peer bandwidth measured in this run implies (two distinct GPUs); the set-up in single-GPU
// SpMVs: partition (LRA's longest row found on the device and the plan), setup (the partition and
// everything else the operator does on the devices: row pointers narrowed with their statistics,
// kernels planned, halo lists found, buffers), upload (copying the matrix from the host, which one
// GPU pays too) and tune (timing the Auto exchange's candidates), and each phase of them in
// milliseconds (setup_<phase>_ms: Timings::setup_phases); the cost model's apply on distinct
// devices from each part's kernel timed alone, the peer bandwidth --model-gbps and the device copy
// bandwidth of this run (predicted_ms, and predicted_speedup_2xh200 over this run's one GPU);
// relative l2 error against the host reference (y poisoned with NaN, bench::operator_error). Writes
// multi_gpu_bench.csv, multi_gpu_bench.json and summary.json into --out after every matrix;
// stops starting new matrices after --time-limit seconds.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/memory.hpp"
#include "bench_common.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"
#include "testing/reference.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;

struct Args {  // read_args() sets every field
  std::vector<std::string> gens;
  std::vector<int> devices;
  int reps = 0, largest = 0;
  double time_limit_s = 0, model_gbps = 0;
  std::string precision, out, matrices;
  Kernel kernel = Kernel::Auto;
  bool graphs = true, signals = true;
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
  a.model_gbps = in.number("model-gbps", 394);
  if (!(a.model_gbps > 0)) throw UsageError("--model-gbps must be > 0");
  a.out = in.text("out", ".");
  a.devices = cuda_devices(in.text("devices", "all"));
  a.graphs = in.choice("graphs", "on", {"on", "off"}) == "on";
  a.signals = in.choice("signals", "on", {"on", "off"}) == "on";
  return a;
}

struct Result {
  std::string matrix, precision, kernel, partition = "-", exchange = "-", note;
  Offset nnz = 0;
  int gpus = 1;
  double ms = NAN, kernel_ms = NAN, exchange_ms = NAN, host_ms = NAN, burst_ms = NAN, gbps = NAN,
         speedup = NAN, bound = NAN, partition_cost = NAN, setup_cost = NAN, upload_cost = NAN,
         tune_cost = NAN, predicted_ms = NAN, predicted_speedup = NAN, rel_error = NAN;
  std::size_t exchange_bytes = 0;
  bool ok = true;
  bool multi = false;      // an operator on several devices: its set-up phases below
  bool replayed = false;   // its applies replayed as CUDA graphs
  bool signalled = false;  // its devices ordered the exchange by flags
  bool chosen = false;     // its devices chosen by the cost model among --devices
  SetupPhases phases;      // milliseconds
};

// NZ's blocks per device in the chunked rows (Options::chunks).
constexpr int kChunks = 4;

// The set-up's phases as JSON keys (setup_<phase>_ms), in the order they run.
const std::vector<std::pair<const char*, double SetupPhases::*>> kPhases = {
    {"longest_row", &SetupPhases::longest_row}, {"plan", &SetupPhases::plan},
    {"source", &SetupPhases::source},           {"streams", &SetupPhases::streams},
    {"allocate", &SetupPhases::allocate},       {"columns", &SetupPhases::columns},
    {"profile", &SetupPhases::profile},         {"profile_device", &SetupPhases::profile_device},
    {"halo_device", &SetupPhases::halo_device}, {"halo_links", &SetupPhases::halo_links},
    {"values", &SetupPhases::values},           {"kernels", &SetupPhases::kernels},
    {"finish", &SetupPhases::finish},           {"overlap", &SetupPhases::overlap},
};

std::string kernels_of(const std::vector<PartInfo>& parts) {
  std::string k;
  for (const auto& p : parts) k += std::string(k.empty() ? "" : "+") + to_string(p.kernel);
  return k;
}

std::string trials_of(const std::vector<TuneTrial>& trials, const std::string& choice) {
  std::string s;
  for (const auto& t : trials)
    if (t.choice == choice)
      s += " " + t.candidate + "=" + fmt(t.median_ms) + "ms" + (t.kept ? " (kept)" : "");
  return s;
}

template <class S>
void bench_matrix(const std::string& name, const CsrMatrix<S>& a, const Args& args,
                  const PeerBandwidth& bw, double copy, std::vector<Result>& out) {
  const double bytes = effective_bytes(a);
  const std::vector<S> x = random_values<S>(a.ncols, std::hash<std::string>{}(name));
  std::vector<S> ref(a.nrows);
  reference::spmv(S(1), a, x.data(), S(0), ref.data());
  const auto base = [&] {
    Result r;
    r.matrix = name, r.precision = precision_name<S>(), r.nnz = a.nnz();
    return r;
  };
  Options o;
  o.backend = Backend::Cuda;
  o.validate = false;     // generated or read by kspmv: valid
  o.time_applies = true;  // one device: its applies on device vectors timed by events

  // One GPU: the fastest single-GPU kernel on the whole matrix.
  double t1 = NAN;
  {
    Result r = base();
    for (Kernel k :
         {Kernel::Cusparse, Kernel::CsrVector, Kernel::PartialOverlap, Kernel::Seg, Kernel::SegR}) {
      try {
        o.kernel = k, o.devices = {args.devices.front()};
        Operator<S> op(a, o);
        const auto dx = op.make_vector(), dy = op.make_vector();
        op.upload(x.data(), a.ncols, dx);
        const double err = operator_error(op, dx, dy, ref);
        const double t = apply_times(op, dx, dy, args.reps).ms;
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
  o.kernel = args.kernel, o.graphs = args.graphs, o.signals = args.signals;
  const auto measure = [&](part::Scheme scheme, part::Exchange exchange, bool tuned, int chunks,
                           bool choose = false) {
    Result r = base();
    r.chosen = o.choose_devices = choose;
    o.devices = args.devices;
    r.gpus = nd, r.partition = std::string(part::to_string(scheme)) +
                               (chunks > 1 ? "-c" + std::to_string(chunks) : "") +
                               (tuned ? "-tuned" : "");
    r.exchange = part::to_string(exchange), r.kernel = to_string(args.kernel);
    std::cerr << "  " << nd << " GPUs " << r.partition << " " << r.exchange << " ... "
              << std::flush;
    try {
      o.partition = scheme, o.exchange = exchange, o.tune_partition = tuned;
      o.chunks = chunks;
      Operator<S> op(a, o);
      r.gpus = static_cast<int>(op.options().devices.size());
      if (r.gpus == 1) {  // the cost model kept one device: the single-GPU operator
        const auto dx = op.make_vector(), dy = op.make_vector();
        op.upload(x.data(), a.ncols, dx);
        r.rel_error = operator_error(op, dx, dy, ref);
        r.ok = r.rel_error <= reference::tolerance<S>();
        const ApplyTimes t = apply_times(op, dx, dy, args.reps);
        r.ms = t.ms, r.kernel_ms = t.kernel_ms, r.exchange_ms = 0, r.host_ms = t.host_ms;
        r.burst_ms = burst_ms(op, dx, dy, args.reps);
        r.gbps = bytes / (r.ms * 1e6), r.speedup = t1 / r.ms, r.kernel = to_string(op.kernel());
        r.note = "the cost model kept one device";
        std::cerr << "1 device chosen: " << fmt(r.ms) << " ms\n";
        out.push_back(r);
        return;
      }
      const Timings built = op.timings();
      r.partition_cost = built.partition_ms / t1;
      r.setup_cost = (built.partition_ms + built.setup_ms) / t1;
      r.upload_cost = built.upload_ms / t1;
      r.tune_cost = built.tune_ms / t1;
      r.multi = true, r.phases = built.setup_phases;
      if (tuned) {  // the (d_l, d_c) tuner runs on the first applies, on device pointers
        cuda::DeviceGuard guard(args.devices.front());
        cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
        dx.upload(x.data());
        for (int i = 0; op.timings().tuning && i < 1000; ++i)
          op.apply(nullptr, S(1), dx.data(), S(0), dy.data());
      }
      const auto dx = op.make_vector(), dy = op.make_vector();
      op.upload(x.data(), a.ncols, dx);
      r.rel_error = operator_error(op, dx, dy, ref);
      r.ok = r.rel_error <= reference::tolerance<S>();
      const ApplyTimes t = apply_times(op, dx, dy, args.reps);
      r.ms = t.ms, r.kernel_ms = t.kernel_ms, r.exchange_ms = t.exchange_ms, r.host_ms = t.host_ms;
      r.burst_ms = burst_ms(op, dx, dy, args.reps);
      r.replayed = op.timings().replayed;
      r.signalled = op.timings().signalled;
      r.gbps = bytes / (r.ms * 1e6);
      r.speedup = t1 / r.ms;
      r.exchange_bytes = op.timings().exchange_bytes;
      // Perfect kernel scaling plus each device receiving its share of the exchanged bytes at
      // the bidirectional peer bandwidth per direction.
      const double per_dir = std::isfinite(bw.both) ? bw.both / 2 : NAN;
      r.bound = t1 / (t1 / nd + (r.exchange_bytes / double(nd)) / (per_dir * 1e6));
      const auto parts = op.parts(args.reps);
      std::vector<double> part_ms;
      for (const auto& p : parts) part_ms.push_back(p.kernel_ms);
      r.predicted_ms = op.predict(part_ms, args.model_gbps, copy).ms;
      r.predicted_speedup = t1 / r.predicted_ms;
      const Timings tuned_t = op.timings();
      r.note = "blocks: " + kernels_of(parts);
      if (!tuned_t.replay_note.empty()) r.note += "; " + tuned_t.replay_note;
      if (!trials_of(tuned_t.trials, "exchange").empty())
        r.note += "; exchange tried" + trials_of(tuned_t.trials, "exchange");
      if (!trials_of(tuned_t.trials, "partition").empty())
        r.note += "; partition tried" + trials_of(tuned_t.trials, "partition");
      std::cerr << fmt(r.ms) << " ms (kernel " << fmt(r.kernel_ms) << ", exchange "
                << fmt(r.exchange_ms) << "), x" << fmt(r.speedup) << ", predicted "
                << fmt(r.predicted_ms) << " ms (x" << fmt(r.predicted_speedup) << "), set-up "
                << fmt(r.setup_cost) << " SpMVs, err " << fmt(r.rel_error)
                << (r.ok ? "" : "  FAILED CHECK") << "\n";
    } catch (const DeviceOutOfMemory& e) {
      r.note = std::string("out of device memory: ") + e.what();
      std::cerr << r.note << "\n";
    } catch (const Error& e) {
      r.ok = false, r.note = e.what();
      std::cerr << "ERROR " << e.what() << "\n";
    }
    out.push_back(r);
  };
  for (part::Scheme scheme :
       {part::Scheme::Rows, part::Scheme::NZ, part::Scheme::TwoNZ, part::Scheme::LRA,
        part::Scheme::LRARC, part::Scheme::PCSR, part::Scheme::PCOO}) {
    for (part::Exchange ex : {part::Exchange::AllGather, part::Exchange::Merge,
                              part::Exchange::Halo, part::Exchange::Auto}) {
      if (!part::exchange_applies(scheme, ex)) continue;
      if (ex == part::Exchange::Auto && part::exchange_candidates(scheme).size() < 2) continue;
      measure(scheme, ex, false, 1);
    }
    if (scheme == part::Scheme::LRA || scheme == part::Scheme::LRARC)
      measure(scheme, part::Exchange::Auto, true, 1);
    if (scheme == part::Scheme::NZ) {  // in chunks: the exchange under the kernels
      for (part::Exchange ex :
           {part::Exchange::AllGather, part::Exchange::Halo, part::Exchange::Auto})
        measure(scheme, ex, false, kChunks);
      if (nd > 1) measure(scheme, part::Exchange::Auto, false, 1, true);  // as many devices as pay
    }
  }
}

// The CSV columns and the JSON of a result, in order.
Record record(const Result& r) {
  Record phases;
  for (const auto& [name, field] : kPhases)
    phases.emplace_back(std::string("setup_") + name + "_ms",
                        r.multi ? Value(r.phases.*field) : Value(nullptr));
  Record rec = {{"matrix", r.matrix},
                {"nnz", r.nnz},
                {"precision", r.precision},
                {"gpus", r.gpus},
                {"partition", r.partition},
                {"exchange", r.exchange},
                {"kernel", r.kernel},
                {"ms", r.ms},
                {"kernel_ms", r.kernel_ms},
                {"exchange_ms", r.exchange_ms},
                {"beyond_kernels_us", (r.ms - r.kernel_ms) * 1e3},
                {"host_us", r.host_ms * 1e3},
                {"burst_ms", r.burst_ms},
                {"replayed", r.replayed},
                {"signalled", r.signalled},
                {"devices_chosen", r.chosen},
                {"gbps", r.gbps},
                {"speedup_vs_1gpu", r.speedup},
                {"speedup_bound", r.bound},
                {"predicted_ms", r.predicted_ms},
                {"predicted_speedup_2xh200", r.predicted_speedup},
                {"exchange_bytes", r.exchange_bytes},
                {"partition_cost_spmvs", r.partition_cost},
                {"setup_cost_spmvs", r.setup_cost},
                {"upload_cost_spmvs", r.upload_cost},
                {"tune_cost_spmvs", r.tune_cost},
                {"rel_error", r.rel_error},
                {"ok", r.ok},
                {"note", r.note}};
  rec.insert(rec.end() - 3, phases.begin(), phases.end());  // after the costs
  return rec;
}

void write_outputs(const Args& args, const std::vector<Result>& results, const PeerBandwidth& bw,
                   double copy) {
  std::vector<Record> rows;
  for (const Result& r : results) rows.push_back(record(r));
  const Record header = {{"device", device_name(args.devices.front())},
                         {"date", utc_date()},
                         {"gpus", args.devices.size()},
                         {"peer_gbps_0_to_1", bw.to_1},
                         {"peer_gbps_1_to_0", bw.to_0},
                         {"peer_gbps_both", bw.both},
                         {"model_peer_gbps", args.model_gbps},
                         {"copy_gbps", copy},
                         {"graphs", args.graphs},
                         {"signals", args.signals}};
  write_results(args.out, "multi_gpu_bench", header, rows, rows,
                {"matrix",
                 "nnz",
                 "precision",
                 "kernel",
                 "gpus",
                 "partition",
                 "exchange",
                 "ms",
                 "gbps",
                 "speedup_vs_1gpu",
                 "predicted_ms",
                 "predicted_speedup_2xh200",
                 "exchange_ms",
                 "beyond_kernels_us",
                 "host_us",
                 "burst_ms",
                 "replayed",
                 "signalled",
                 "devices_chosen",
                 "partition_cost_spmvs",
                 "setup_cost_spmvs",
                 "upload_cost_spmvs",
                 "kernel_ms",
                 "speedup_bound",
                 "rel_error",
                 "ok"});
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
  double copy = NAN;
  {
    cuda::DeviceGuard guard(d0);
    copy = copy_gbps(args.reps);
  }
  std::cerr << "device copy GB/s: " << fmt(copy)
            << "; the model's peer link: " << fmt(args.model_gbps) << " GB/s each way\n";
  std::vector<Result> results;
  run_sources(
      generated_then_largest(args.gens, args.matrices, args.largest, false), {args.precision}, t0,
      args.time_limit_s,
      [&](const std::string& name, const std::string&, const auto& a) {
        bench_matrix(name, a, args, bw, copy, results);
      },
      [&](const std::string& name, const std::string& precision, const std::string& what) {
        Result r;
        r.matrix = name, r.precision = precision, r.kernel = "-", r.ok = false, r.note = what;
        results.push_back(r);
      },
      [&] { write_outputs(args, results, bw, copy); });  // a later failure keeps what was measured
  std::printf("%-26s %4s %-10s %-11s %9s %9s %7s %7s %9s %7s %9s %7s %8s %9s\n", "matrix", "gpus",
              "part", "exchange", "ms", "kern_ms", "beyond", "host_us", "burst_ms", "x1gpu",
              "pred_ms", "x_pred", "setup", "rel_err");
  for (const auto& r : results)
    std::printf(
        "%-26.26s %4d %-10s %-11s %9.4f %9.4f %7.1f %7.1f %9.4f %7.2f %9.4f %7.2f %8.3f "
        "%9.2e%s%s\n",
        r.matrix.c_str(), r.gpus, r.partition.c_str(), r.exchange.c_str(), r.ms, r.kernel_ms,
        (r.ms - r.kernel_ms) * 1e3, r.host_ms * 1e3, r.burst_ms, r.speedup, r.predicted_ms,
        r.predicted_speedup, r.setup_cost, r.rel_error, r.chosen ? "  (chosen)" : "",
        r.ok ? "" : "  FAILED");
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
      "Multi-GPU SpMV per matrix through kspmv::Operator: the best single-GPU kernel against "
      "every\n"
      "partition scheme and exchange on --devices, with the set-up in single-GPU SpMVs, the\n"
      "speedup bound the measured peer bandwidth implies and the cost model's prediction for\n"
      "distinct GPUs. Writes multi_gpu_bench.csv, multi_gpu_bench.json and summary.json into\n"
      "--out.";
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
      {"graphs", "on|off",
       "replay each multi-device apply as a CUDA graph (default on; off: enqueued step by step)"},
      {"signals", "on|off",
       "halo on distinct GPUs ordered by flags the GPUs raise (default on; off: by events)"},
      {"model-gbps", "G",
       "the cost model's peer bandwidth, GB/s each way (default 394: the 2x H200 machine)"},
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

// kspmv spmv: run one SpMV configuration, check it against the reference and report its speed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "partitioners/partition_plan.hpp"
#include "testing/reference.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace kspmv::cli {

namespace {

// "0,1" of a device list.
std::string device_list(const std::vector<int>& devices) {
  std::string list;
  for (int d : devices) list += (list.empty() ? "" : ",") + std::to_string(d);
  return list;
}

template <class Scalar>
int run_spmv(const ParsedArgs& args, const Options& options) {
  const std::string source = args.positionals[0];
  const int iters = static_cast<int>(args.integer("iters", 20, 1, 1000000));
  const auto alpha = scalar_option<Scalar>(args, "alpha", 1.0);
  const auto beta = scalar_option<Scalar>(args, "beta", 0.0);

  const CsrMatrix<Scalar> a =
      load_matrix<Scalar>(source, stderr_is_terminal(), args.flag("allow-nonfinite"));
  Operator<Scalar> op(a, options);
  // The checked apply is also the warm-up of the timed ones; the tuners (kernel autotune, the
  // LRA pair) decide on the applies before those, each a correct SpMV.
  double error = check(op, a, alpha, beta, 1);
  for (std::uint64_t seed = 2; op.timings().tuning && seed < 10000; ++seed)
    error = std::max(error, check(op, a, alpha, beta, seed));
  const Timing t = time_applies(op, alpha, beta, iters, 2);
  const Timings ot = op.timings();
  const double tol = reference::tolerance<Scalar>();
  const bool ok = error <= tol;
  const double gbs = effective_bytes(a) / (t.ms * 1e6);
  const double gflops = 2.0 * static_cast<double>(a.nnz()) / (t.ms * 1e6);
  const bool multi = op.options().devices.size() > 1;

  if (args.flag("json")) {
    JsonWriter j(std::cout);
    begin_output(j)
        .field("matrix", source)
        .field("nrows", a.nrows)
        .field("ncols", a.ncols)
        .field("nnz", a.nnz())
        .field("precision", precision_name<Scalar>())
        .field("backend", to_string(options.backend))
        .field("kernel_requested", to_string(options.kernel))
        .field("kernel", to_string(op.kernel()))
        .field("residency_requested", to_string(options.residency))
        .field("residency", to_string(op.residency()));
    if (options.device_memory_limit > 0)
      j.field("device_memory_cap_gb", options.device_memory_limit / 1e9);
    else
      j.key("device_memory_cap_gb").null();
    j.key("devices").begin_array();
    for (int d : op.options().devices) j.value(d);
    j.end_array();
    j.field("choose_devices", options.choose_devices);
    if (multi) {
      j.field("partition", part::to_string(options.partition))
          .field("exchange", part::to_string(options.exchange));
      j.field("chunks", options.chunks).field("graphs", ot.replayed);
      j.field("signals", ot.signalled);
      if (!ot.replay_note.empty()) j.field("graphs_note", ot.replay_note);
    } else {  // one device: no partition, no exchange
      j.key("partition").null().key("exchange").null();
    }
    j.field("alpha", static_cast<double>(alpha))
        .field("beta", static_cast<double>(beta))
        .field("runs", t.runs)
        .field("time_ms", t.ms)
        .field("apply_ms", t.apply_ms)
        .field("preprocess_ms", ot.preprocess_ms)
        .field("partition_ms", ot.partition_ms)
        .field("upload_ms", ot.upload_ms)
        .field("setup_ms", ot.setup_ms)
        .field("tune_ms", ot.tune_ms)
        .field("reorder_requested", to_string(options.reorder))
        .field("reorder", to_string(op.reorder()))
        .field("reorder_ms", ot.reorder_ms)
        .field("reorder_spmvs", ot.reorder_ms / t.ms)
        .field("reorder_model", ot.reorder_model);
    if (multi) j.field("exchange_bytes", static_cast<long long>(ot.exchange_bytes));
    j.key("tuning").begin_array();  // what the tuners tried and kept
    for (const TuneTrial& tr : ot.trials)
      j.begin_object()
          .field("choice", tr.choice)
          .field("candidate", tr.candidate)
          .field("median_ms", tr.median_ms)
          .field("runs", tr.runs)
          .field("kept", tr.kept)
          .end_object();
    j.end_array()
        .field("gbs", gbs)
        .field("gflops", gflops)
        .field("rel_error", error)
        .field("tolerance", tol)
        .field("ok", ok)
        .end_object();
  } else {
    std::printf("matrix     %s: %d x %d, %lld non-zeros, %s\n", source.c_str(), a.nrows, a.ncols,
                static_cast<long long>(a.nnz()), precision_name<Scalar>());
    std::printf(
        "operator   backend %s, kernel %s (asked: %s), residency %s (asked: %s), preprocessing "
        "%.3f ms\n",
        to_string(options.backend), to_string(op.kernel()), to_string(options.kernel),
        to_string(op.residency()), to_string(options.residency), ot.preprocess_ms);
    if (options.reorder != Reorder::None)
      std::printf("reorder    %s (asked: %s): %.3f ms, %.1f SpMVs; model %.3f%s\n",
                  to_string(op.reorder()), to_string(options.reorder), ot.reorder_ms,
                  ot.reorder_ms / t.ms, ot.reorder_model,
                  op.reorder() == Reorder::Stripes ? " (stripes: cut in the preprocessing)" : "");
    if (options.device_memory_limit > 0)
      std::printf("memory     device memory capped at %.3g GB\n",
                  options.device_memory_limit / 1e9);
    for (const TuneTrial& tr : ot.trials)
      std::printf("tuned      %s %s: median %.4f ms of %d runs%s\n", tr.choice.c_str(),
                  tr.candidate.c_str(), tr.median_ms, tr.runs, tr.kept ? " (kept)" : "");
    std::printf("devices    %s%s\n", device_list(op.options().devices).c_str(),
                multi ? (std::string(", partition ") + part::to_string(options.partition) +
                         ", exchange " + part::to_string(options.exchange))
                            .c_str()
                      : " (one device: no partition, no exchange)");
    std::printf("time       %.4f ms per SpMV (median of %d; whole apply %.4f ms)\n", t.ms, t.runs,
                t.apply_ms);
    std::printf("speed      %.2f GB/s effective, %.2f GFLOP/s\n", gbs, gflops);
    std::printf("check      relative l2 error %.3g (tolerance %.0e): %s\n", error, tol,
                ok ? "ok" : "WRONG");
  }
  return ok ? 0 : 1;
}

// "host: auto, csr, ...; cuda: auto, ..." from the kernel registry.
std::string kernel_names() {
  std::string names;
  for (const Backend b : kBackends) {
    const auto rows = kernels_of(b);
    if (rows.empty()) continue;
    names += std::string(names.empty() ? "" : "; ") + to_string(b) + ": auto";
    for (const KernelInfo& row : rows) names += std::string(", ") + to_string(row.kernel);
  }
  return names + " (default auto)";
}

int run(const ParsedArgs& args) {
  Options options;
  options.backend = parse_backend(args.text("backend", "host"));
  options.kernel = parse_kernel(args.text("kernel", "auto"));
  options.residency = parse_residency(args.text("residency", "auto"));
  options.device_memory_limit = device_memory_cap(args);
  options.autotune = args.flag("autotune");
  options.reorder = parse_reorder(args.text("reorder", "none"));
  options.stripe_columns = stripe_columns(args);
  if (args.has("devices")) options.devices = parse_devices(args.text("devices", ""));
  options.partition =
      part::parse_scheme(args.text("partition", part::to_string(options.partition)));
  options.exchange = part::parse_exchange(args.text("exchange", part::to_string(options.exchange)));
  options.chunks = static_cast<int>(args.integer("chunks", 1, 1, part::kMaxStreamSlots));
  options.choose_devices = args.flag("choose-devices");
  options.graphs = args.choice("graphs", "on", {"on", "off"}) == "on";
  options.signals = args.choice("signals", "on", {"on", "off"}) == "on";
  const std::string precision = args.choice("precision", "double", {"float", "double"});
  return precision == "float" ? run_spmv<float>(args, options) : run_spmv<double>(args, options);
}

}  // namespace

Command spmv_command() {
  Command c;
  c.name = "spmv";
  c.summary = "run y = alpha*A*x + beta*y with one backend and kernel, check and time it";
  c.description = std::string(
                      "Builds an Operator for the matrix, checks one apply against the serial "
                      "reference\n(output poisoned with NaN when beta is 0), then reports the "
                      "median time of --iters\napplies, the effective bandwidth and GFLOP/s. The "
                      "time is the kernel time, or the\nwhole apply when the matrix is streamed "
                      "(residency streamed, kernel\nfull-overlap). Exit status 1 when the "
                      "result is wrong.\n\n") +
                  kMatrixArgumentHelp;
  c.positionals = {"FILE|gen:SPEC"};
  c.options = {
      {"backend", "host|cuda|kokkos-default", kBackendHelp},
      {"kernel", "NAME", kernel_names()},
      {"precision", "float|double", "scalar type (default double)"},
      {"alpha", "A", "alpha (default 1)"},
      {"beta", "B", "beta (default 0)"},
      {"iters", "N", "timed applies (default 20)"},
      {"residency", "auto|resident|streamed",
       "where the matrix lives during apply (CUDA; default auto: resident when it fits in the "
       "device memory kspmv may use, streamed otherwise)"},
      kDeviceMemoryCapOption,
      {"devices", "LIST", kDevicesHelp},
      {"partition", "NAME", partition_help()},
      {"exchange", "NAME", exchange_help()},
      {"chunks", "N", kChunksHelp},
      {"choose-devices", "", kChooseDevicesHelp},
      {"graphs", "on|off", kGraphsHelp},
      {"signals", "on|off", kSignalsHelp},
      {"autotune", "",
       "let kernel auto time its candidates on the first applies (CUDA, one device)"},
      {"reorder", "none|auto|rcm|degree|bfs|stripes", kReorderHelp},
      kStripeColumnsOption,
      {"allow-nonfinite", "", "use a file with NaN, infinite or overflowing values as it is"},
      {"json", "", "print one JSON object instead of text"},
  };
  c.run = run;
  return c;
}

}  // namespace kspmv::cli

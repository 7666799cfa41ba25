// HBP benchmark (paper 3, Sec. IV-B and IV-C).
// Preprocessing, at the paper's block sizes (512 x 4096): the HBP arrays built on the GPU from
// the uploaded CSR (the hash sampled there too), the paper's two baselines sort2D and DP2D built
// on the GPU the same way (the same-processor comparison), and the hash and both baselines on the
// host, one thread (HBP-host, sort2D-host, DP2D-host). Every preprocessing time is the
// wall-clock median of --prep-reps complete builds (allocation included); for the GPU builds
// also the median device time of the reordering step alone (the step where the three differ). Host
// builds run on matrices up to --host-max-nnz non-zeros and 2^28 table slots (DP2D is slow on huge
// ones); the others say so. The GPU arrays (HBP, sort2D, DP2D) are checked equal to the host's
// where both exist (--spmv-only skips the baselines and the host builds). SpMV: HBP, CSR-Vector
// and cuSPARSE CSR_ALG1 on the same buffers, event-timed medians of --reps interleaved rounds,
// checked against the host reference on a NaN-poisoned y; speedup over cuSPARSE. HBP runs in every
// --variant (block sizes, fixed share and the kernel's launch plan, from the kernel's defaults;
// the first is the one of the main table), so that one run compares them. Also the Fig. 6
// warp-group standard deviation of row lengths before and after hashing (paper's blocks). Writes
// hbp_bench.csv, hbp_variants.csv and hbp_bench.json into --out, after every matrix.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/hbp_spmv.hpp"
#include "bench_common.hpp"
#include "testing/reference.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;
namespace fs = std::filesystem;

// Host builds also skip tables of more slots (their per-slot work and memory, times three).
constexpr Offset kHostMaxSlots = Offset(1) << 28;

// An HBP configuration of --variant: "key=value,..." with keys rows, cols, fixed (HbpParams,
// from cuda::hbp_device_params()), warps, shared_x, slice, ticket, registers (cuda::HbpLaunch);
// the others keep their defaults ("default": all of them).
struct Variant {
  std::string name;
  HbpParams params = cuda::hbp_device_params();
  cuda::HbpLaunch launch;
};

Variant parse_variant(const std::string& spec) {
  Variant v;
  v.name = spec.empty() ? "default" : spec;
  for (const std::string& item : split(spec == "default" ? "" : spec, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw InvalidArgument("--variant: expected key=value, got " + item);
    const std::string key = item.substr(0, eq);
    const double value = parse_number(item.substr(eq + 1), "--variant " + key);
    if (key == "rows")
      v.params.block_rows = static_cast<Ordinal>(value);
    else if (key == "cols")
      v.params.block_cols = static_cast<Ordinal>(value);
    else if (key == "fixed")
      v.params.fixed_fraction = value;
    else if (key == "warps")
      v.launch.warps = static_cast<int>(value);
    else if (key == "shared_x")
      v.launch.shared_x = value;
    else if (key == "slice")
      v.launch.slice_nnz = static_cast<Offset>(value);
    else if (key == "ticket")
      v.launch.ticket_groups = static_cast<int>(value);
    else if (key == "registers")
      v.launch.registers = static_cast<int>(value);
    else
      throw InvalidArgument("--variant: unknown key " + key);
  }
  check_hbp_params(v.params);
  cuda::check_hbp_launch(v.launch);
  return v;
}

struct Args {  // read_args() sets every field
  std::string matrices, out;
  std::vector<std::string> gens, precisions;
  std::vector<Variant> variants;
  int reps = 0, prep_reps = 0, device = 0;
  Offset host_max_nnz = 0;
  bool spmv_only = false;
};

Args read_args(const ParsedArgs& in) {
  Args a;
  a.matrices = in.text("matrices", "");
  a.out = in.text("out", ".");
  a.gens = in.all("gen");
  if (a.gens.empty() && !in.flag("no-default-gen")) {
    a.gens = {"laplace2d:n=2048", "stencil27:n=100",  "uniform:rows=500000,k=8",
              "kron:scale=16",    "kron:scale=18",    "kron:scale=20",
              "rgg:scale=20",     "kmer:rows=200000", "fullchip:rows=300000"};
  }
  a.precisions = precisions(in, "double");
  a.reps = static_cast<int>(in.integer("reps", 20, 1, 1000000));
  a.prep_reps = static_cast<int>(in.integer("prep-reps", 5, 1, 1000000));
  a.host_max_nnz = in.integer("host-max-nnz", 20000000, 0, LONG_MAX);
  a.device = static_cast<int>(in.integer("device", 0, 0, 1023));
  a.spmv_only = in.flag("spmv-only");
  for (const std::string& spec : in.all("variant")) a.variants.push_back(parse_variant(spec));
  if (a.variants.empty()) a.variants.push_back(parse_variant(""));
  return a;
}

struct VariantResult {
  double ms = NAN, err = NAN;
};

struct Result {
  std::string matrix, precision, note;
  std::vector<VariantResult> variants;  // by Args::variants; hbp_ms, hbp_err: the first
  Ordinal m = 0, n = 0, blocks = 0;
  Offset nnz = 0, slots = 0;
  int hash_a = 0, hash_c = 0;
  double prep_gpu_ms = NAN, prep_host_hbp_ms = NAN, prep_sort2d_ms = NAN, prep_dp2d_ms = NAN;
  double prep_gpu_sort2d_ms = NAN, prep_gpu_dp2d_ms = NAN;
  double reorder_gpu_ms = NAN, reorder_gpu_sort2d_ms = NAN, reorder_gpu_dp2d_ms = NAN;
  double std_before = NAN, std_hash = NAN, std_sort = NAN;
  bool identical = false, host_built = false;
  double cusparse_ms = NAN, csr_vector_ms = NAN, hbp_ms = NAN;
  double hbp_err = NAN, csr_vector_err = NAN, cusparse_err = NAN;
  bool ok = true;

  double speedup_vs_cusparse() const { return cusparse_ms / hbp_ms; }
  double speedup_vs_csr_vector() const { return csr_vector_ms / hbp_ms; }
};

// A GPU build's median wall-clock time (after one warm-up build) and the median device time of its
// reordering step.
struct GpuBuildTimes {
  double wall_ms, reorder_ms;
};
template <class S, class F>
GpuBuildTimes time_gpu_build(int reps, F build) {
  std::vector<double> reorder;
  const double wall = median_ms(
      [&] {
        const cuda::DeviceHbp<S> h = build();
        reorder.push_back(h.reorder_ms);
      },
      reps, 1);
  reorder.erase(reorder.begin());  // the warm-up's
  return {wall, median(reorder)};
}

template <class S>
bool same_arrays(const HbpMatrix<S>& x, const HbpMatrix<S>& y) {
  return x.block_row == y.block_row && x.block_col == y.block_col && x.table_ptr == y.table_ptr &&
         x.group_ptr == y.group_ptr && x.begin_nnz == y.begin_nnz &&
         x.output_hash == y.output_hash && x.combine_ptr == y.combine_ptr && x.col == y.col &&
         x.data == y.data && x.add_sign == y.add_sign && x.dp_padded_nnz == y.dp_padded_nnz;
}

// The paper's baselines (sort2D, DP2D) built on the GPU, and the hash and both baselines on the
// host (one thread), checked equal to the GPU's builds.
template <class S>
void bench_baselines(const CsrPointers<S>& host, const cuda::DeviceCsr<S>& d,
                     const HbpMatrix<S>& gpu, const Args& args, Result& r) {
  const HbpParams p;
  const HbpHash hash = gpu.hash;
  const GpuBuildTimes sort_times = time_gpu_build<S>(
      args.prep_reps, [&] { return cuda::build_hbp_device(d, p, hash, HbpReorder::Sort); });
  const GpuBuildTimes dp_times = time_gpu_build<S>(
      args.prep_reps, [&] { return cuda::build_hbp_device(d, p, hash, HbpReorder::Dp); });
  r.prep_gpu_sort2d_ms = sort_times.wall_ms, r.reorder_gpu_sort2d_ms = sort_times.reorder_ms;
  r.prep_gpu_dp2d_ms = dp_times.wall_ms, r.reorder_gpu_dp2d_ms = dp_times.reorder_ms;
  std::cerr << ", GPU sort2D " << fmt(r.prep_gpu_sort2d_ms) << " ms, GPU DP2D "
            << fmt(r.prep_gpu_dp2d_ms) << " ms; reordering step " << fmt(r.reorder_gpu_ms) << " / "
            << fmt(r.reorder_gpu_sort2d_ms) << " / " << fmt(r.reorder_gpu_dp2d_ms) << " ms"
            << std::flush;

  // Preprocessing on the host, one thread: the hash and the two baselines.
  if (host.nnz() <= args.host_max_nnz && r.slots <= kHostMaxSlots) {
    r.host_built = true;
    const int reps = std::max(1, args.prep_reps / 2);
    HbpMatrix<S> h, sorted, dp;
    r.prep_host_hbp_ms = median_ms(
        [&] { h = build_hbp(host, p, hbp_sample_hash(host.row_ptr, host.col, host.m, host.n, p)); },
        reps);
    r.prep_sort2d_ms =
        median_ms([&] { sorted = build_hbp(host, p, hash, HbpReorder::Sort); }, reps);
    r.prep_dp2d_ms = median_ms([&] { dp = build_hbp(host, p, hash, HbpReorder::Dp); }, reps);
    r.identical =
        same_arrays(gpu, h) &&
        same_arrays(cuda::build_hbp_device(d, p, hash, HbpReorder::Sort).download(), sorted) &&
        same_arrays(cuda::build_hbp_device(d, p, hash, HbpReorder::Dp).download(), dp);
    r.std_sort = hbp_balance(sorted).after;
    if (!r.identical) r.ok = false, r.note = "GPU preprocessing differs from the host's; ";
    std::cerr << ", host HBP " << fmt(r.prep_host_hbp_ms) << " ms, sort2D " << fmt(r.prep_sort2d_ms)
              << " ms, DP2D " << fmt(r.prep_dp2d_ms) << " ms"
              << (r.identical ? ", arrays identical" : ", ARRAYS DIFFER");
  } else {
    r.note += "host preprocessing skipped (nnz > --host-max-nnz or table > 2^28 slots); ";
    std::cerr << ", host builds skipped (nnz > " << args.host_max_nnz << " or table > 2^28)";
  }
}

template <class S>
void bench_matrix(const std::string& name, const CsrMatrix<S>& a, const Args& args, Result& r) {
  const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  const HbpParams p;
  const auto d = std::make_shared<const cuda::DeviceCsr<S>>(cuda::DeviceCsr<S>::upload(host));

  // Preprocessing on the GPU: sampling + Alg. 2 + placement + conversion, all on the device.
  const GpuBuildTimes hbp_times =
      time_gpu_build<S>(args.prep_reps, [&] { return cuda::build_hbp_device(*d, p); });
  r.prep_gpu_ms = hbp_times.wall_ms, r.reorder_gpu_ms = hbp_times.reorder_ms;
  const HbpMatrix<S> gpu = cuda::build_hbp_device(*d, p).download();
  const HbpHash hash = gpu.hash;
  r.blocks = gpu.blocks();
  r.slots = gpu.slots();
  r.hash_a = hash.shift, r.hash_c = hash.fine;
  const HbpBalance balance = hbp_balance(gpu);
  r.std_before = balance.before, r.std_hash = balance.after;
  std::cerr << "  prep: GPU " << fmt(r.prep_gpu_ms) << " ms (" << r.blocks << " blocks, a "
            << hash.shift << ", c " << hash.fine << ")" << std::flush;
  if (!args.spmv_only) bench_baselines(host, *d, gpu, args, r);
  std::cerr << "\n  std-dev per warp group: " << fmt(r.std_before) << " -> " << fmt(r.std_hash)
            << " (hash)\n";

  // SpMV: cuSPARSE, CSR-Vector and every HBP variant, checked, then timed in interleaved rounds.
  const std::vector<S> x = random_values<S>(a.ncols, std::hash<std::string>{}(name) ^ sizeof(S));
  std::vector<S> ref(a.nrows);
  reference::spmv(S(1), a, x.data(), S(0), ref.data());
  cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
  dx.upload(x.data());
  cuda::Stream stream;
  std::vector<std::unique_ptr<cuda::DeviceSpmv<S>>> kernels;
  std::vector<std::string> names = {"cusparse", "csr-vector"};
  kernels.push_back(cuda::make_device_spmv(Kernel::Cusparse, d, host));
  kernels.push_back(cuda::make_device_spmv(Kernel::CsrVector, d, host));
  for (const Variant& v : args.variants) {
    kernels.push_back(cuda::make_hbp(d, host, v.params, v.launch));
    names.push_back("hbp " + v.name);
  }
  std::vector<double> err;
  std::vector<Body> bodies;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    err.push_back(poisoned_error(*kernels[k], dx, dy, ref, stream.get()));
    r.ok = r.ok && err[k] <= reference::tolerance<S>();
    bodies.push_back([&, k] { kernels[k]->run(S(1), dx.data(), S(0), dy.data(), stream.get()); });
  }
  const std::vector<double> ms = time_interleaved_ms(bodies, stream.get(), args.reps);
  for (std::size_t k = 0; k < kernels.size(); ++k)
    std::cerr << "  " << names[k] << ": " << fmt(ms[k]) << " ms, err " << fmt(err[k])
              << (err[k] <= reference::tolerance<S>() ? "" : "  FAILED CHECK") << "\n";
  r.cusparse_ms = ms[0], r.cusparse_err = err[0];
  r.csr_vector_ms = ms[1], r.csr_vector_err = err[1];
  for (std::size_t v = 0; v < args.variants.size(); ++v)
    r.variants.push_back({ms[v + 2], err[v + 2]});
  r.hbp_ms = ms[2], r.hbp_err = err[2];
  std::cerr << "  HBP speedup over cuSPARSE " << fmt(r.speedup_vs_cusparse())
            << ", over CSR-Vector " << fmt(r.speedup_vs_csr_vector()) << "\n";
}

double geomean(const std::vector<double>& v) {
  double s = 0;
  int n = 0;
  for (double e : v)
    if (std::isfinite(e) && e > 0) s += std::log(e), ++n;
  return n ? std::exp(s / n) : NAN;
}

// Geomean preprocessing speedups of HBP: on the GPU over the GPU baselines (same processor),
// on the GPU over the host baselines, and on the host over the host baselines.
struct Summary {
  double gpu_sort2d_vs_gpu = NAN, gpu_dp2d_vs_gpu = NAN;
  double reorder_sort2d_vs_hash = NAN, reorder_dp2d_vs_hash = NAN;
  double sort2d_vs_gpu = NAN, dp2d_vs_gpu = NAN, sort2d_vs_host = NAN, dp2d_vs_host = NAN;
  double hbp_vs_cusparse = NAN;
};

Summary summarize(const std::vector<Result>& results) {
  std::vector<double> gs, gd, rs, rd, sg, dg, sh, dh, sp;
  for (const auto& r : results) {
    rs.push_back(r.reorder_gpu_sort2d_ms / r.reorder_gpu_ms);
    rd.push_back(r.reorder_gpu_dp2d_ms / r.reorder_gpu_ms);
    gs.push_back(r.prep_gpu_sort2d_ms / r.prep_gpu_ms);
    gd.push_back(r.prep_gpu_dp2d_ms / r.prep_gpu_ms);
    sg.push_back(r.prep_sort2d_ms / r.prep_gpu_ms);
    dg.push_back(r.prep_dp2d_ms / r.prep_gpu_ms);
    sh.push_back(r.prep_sort2d_ms / r.prep_host_hbp_ms);
    dh.push_back(r.prep_dp2d_ms / r.prep_host_hbp_ms);
    sp.push_back(r.speedup_vs_cusparse());
  }
  return {geomean(gs), geomean(gd), geomean(rs), geomean(rd), geomean(sg),
          geomean(dg), geomean(sh), geomean(dh), geomean(sp)};
}

// The CSV columns, in order; the JSON of a result adds the errors of CSR-Vector and cuSPARSE.
Record record(const Result& r) {
  return {{"matrix", r.matrix},
          {"rows", r.m},
          {"cols", r.n},
          {"nnz", r.nnz},
          {"precision", r.precision},
          {"blocks", r.blocks},
          {"table_slots", r.slots},
          {"hash_a", r.hash_a},
          {"hash_c", r.hash_c},
          {"prep_gpu_ms", r.prep_gpu_ms},
          {"prep_gpu_sort2d_ms", r.prep_gpu_sort2d_ms},
          {"prep_gpu_dp2d_ms", r.prep_gpu_dp2d_ms},
          {"gpu_sort2d_over_gpu", r.prep_gpu_sort2d_ms / r.prep_gpu_ms},
          {"gpu_dp2d_over_gpu", r.prep_gpu_dp2d_ms / r.prep_gpu_ms},
          {"reorder_gpu_ms", r.reorder_gpu_ms},
          {"reorder_gpu_sort2d_ms", r.reorder_gpu_sort2d_ms},
          {"reorder_gpu_dp2d_ms", r.reorder_gpu_dp2d_ms},
          {"prep_host_hbp_ms", r.prep_host_hbp_ms},
          {"prep_sort2d_ms", r.prep_sort2d_ms},
          {"prep_dp2d_ms", r.prep_dp2d_ms},
          {"sort2d_over_gpu", r.prep_sort2d_ms / r.prep_gpu_ms},
          {"dp2d_over_gpu", r.prep_dp2d_ms / r.prep_gpu_ms},
          {"sort2d_over_host_hbp", r.prep_sort2d_ms / r.prep_host_hbp_ms},
          {"dp2d_over_host_hbp", r.prep_dp2d_ms / r.prep_host_hbp_ms},
          {"gpu_equals_host", r.host_built ? Value(r.identical) : Value(nullptr)},
          {"std_before", r.std_before},
          {"std_after_hash", r.std_hash},
          {"std_after_sort", r.std_sort},
          {"cusparse_ms", r.cusparse_ms},
          {"csr_vector_ms", r.csr_vector_ms},
          {"hbp_ms", r.hbp_ms},
          {"hbp_speedup_vs_cusparse", r.speedup_vs_cusparse()},
          {"hbp_speedup_vs_csr_vector", r.speedup_vs_csr_vector()},
          {"hbp_rel_error", r.hbp_err},
          {"ok", r.ok},
          {"note", r.note}};
}

// One row per matrix, precision and HBP variant (hbp_variants.csv, and the JSON's
// "variant_results").
std::vector<Record> variant_rows(const Args& args, const std::vector<Result>& results) {
  std::vector<Record> rows;
  for (const Result& r : results) {
    for (std::size_t v = 0; v < r.variants.size(); ++v)
      rows.push_back({{"matrix", r.matrix},
                      {"precision", r.precision},
                      {"nnz", r.nnz},
                      {"variant", args.variants[v].name},
                      {"hbp_ms", r.variants[v].ms},
                      {"cusparse_ms", r.cusparse_ms},
                      {"csr_vector_ms", r.csr_vector_ms},
                      {"hbp_speedup_vs_cusparse", r.cusparse_ms / r.variants[v].ms},
                      {"hbp_rel_error", r.variants[v].err}});
  }
  return rows;
}

// Per variant: the geomean speedup over cuSPARSE of each precision and the smallest one.
std::vector<Record> variant_summary(const Args& args, const std::vector<Result>& results) {
  std::vector<Record> summary;
  for (std::size_t v = 0; v < args.variants.size(); ++v) {
    Record row = {{"variant", args.variants[v].name}};
    double least = INFINITY;
    for (const std::string precision : {"double", "float"}) {
      std::vector<double> sp;
      for (const Result& r : results) {
        if (r.precision != precision || r.variants.size() <= v) continue;
        sp.push_back(r.cusparse_ms / r.variants[v].ms);
        least = std::min(least, sp.back());
      }
      row.emplace_back("geomean_" + precision, geomean(sp));
    }
    row.emplace_back("min", std::isfinite(least) ? least : NAN);
    summary.push_back(row);
  }
  return summary;
}

void write_outputs(const Args& args, const std::vector<Result>& results) {
  const fs::path out = args.out;
  fs::create_directories(out);
  std::vector<Record> rows;
  for (const Result& r : results) rows.push_back(record(r));
  write_csv(out / "hbp_bench.csv", rows);
  const std::vector<Record> per_variant = variant_rows(args, results);
  write_csv(out / "hbp_variants.csv", per_variant);

  const std::string device = device_name(args.device), gpu = "GPU " + device;
  const std::string host = "host, 1 thread";
  const Summary s = summarize(results);
  std::ofstream f(out / "hbp_bench.json");
  JsonWriter j(f);
  begin_output(j).field("device", device).field("date", utc_date());
  j.field("processors", Record{{"prep_gpu", gpu},
                               {"prep_gpu_sort2d", gpu},
                               {"prep_gpu_dp2d", gpu},
                               {"prep_host_hbp", host},
                               {"prep_sort2d", host},
                               {"prep_dp2d", host}});
  j.field("host_threads", std::thread::hardware_concurrency());
  j.field("geomean", Record{{"gpu_sort2d_over_gpu", s.gpu_sort2d_vs_gpu},
                            {"gpu_dp2d_over_gpu", s.gpu_dp2d_vs_gpu},
                            {"reorder_sort2d_over_hash", s.reorder_sort2d_vs_hash},
                            {"reorder_dp2d_over_hash", s.reorder_dp2d_vs_hash},
                            {"sort2d_over_gpu", s.sort2d_vs_gpu},
                            {"dp2d_over_gpu", s.dp2d_vs_gpu},
                            {"sort2d_over_host_hbp", s.sort2d_vs_host},
                            {"dp2d_over_host_hbp", s.dp2d_vs_host},
                            {"hbp_speedup_vs_cusparse", s.hbp_vs_cusparse}});
  j.key("variants").begin_array(true);
  for (const Record& v : variant_summary(args, results)) j.value(v);
  j.end_array();
  j.key("results").begin_array(true);
  for (std::size_t i = 0; i < results.size(); ++i) {
    rows[i].emplace(rows[i].end() - 2, "csr_vector_rel_error", results[i].csr_vector_err);
    rows[i].emplace(rows[i].end() - 2, "cusparse_rel_error", results[i].cusparse_err);
    j.value(rows[i]);
  }
  j.end_array();
  j.key("variant_results").begin_array(true);
  for (const Record& v : per_variant) j.value(v);
  j.end_array().end_object();
}

int run(const ParsedArgs& parsed) {
  const Args args = read_args(parsed);
  if (cuda::device_count() <= args.device)
    throw InvalidArgument("no CUDA device " + std::to_string(args.device));
  KSPMV_CUDA_CHECK(cudaSetDevice(args.device));
  std::cerr << "preprocessing: HBP, sort2D and DP2D on the GPU; HBP-host, sort2D and DP2D on the "
               "host, 1 thread, up to "
            << args.host_max_nnz << " nnz\n";
  std::vector<Result> results;
  run_sources(
      benchmark_sources(args.matrices, args.gens, 40000), args.precisions, Clock::now(), INFINITY,
      [&](const std::string& name, const std::string& precision, const auto& a) {
        Result r;
        r.matrix = name, r.precision = precision, r.m = a.nrows, r.n = a.ncols, r.nnz = a.nnz();
        try {
          bench_matrix(name, a, args, r);
        } catch (const Error& e) {  // e.g. out of device memory: keeps what was measured before
          std::cerr << "ERROR " << name << " (" << precision << "): " << e.what() << "\n";
          r.ok = false, r.note += e.what();
        }
        results.push_back(r);
      },
      [&](const std::string& name, const std::string& precision, const std::string& what) {
        Result r;  // a matrix that cannot load or upload: noted, the run goes on
        r.matrix = name, r.precision = precision, r.ok = false, r.note = what;
        results.push_back(r);
      },
      [&] { write_outputs(args, results); });
  const Summary s = summarize(results);
  std::printf("%-26s %6s %9s %9s %9s %9s %9s %9s %9s %9s %8s %8s\n", "matrix", "prec", "prepGPU",
              "sort2D-G", "DP2D-G", "prepHost", "sort2D-H", "DP2D-H", "cuSPARSE", "HBP", "vs cusp",
              "std b/a");
  for (const auto& r : results) {
    std::printf(
        "%-26.26s %6s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.4f %9.4f %8.2f %4.2f/%4.2f%s\n",
        r.matrix.c_str(), r.precision.c_str(), r.prep_gpu_ms, r.prep_gpu_sort2d_ms,
        r.prep_gpu_dp2d_ms, r.prep_host_hbp_ms, r.prep_sort2d_ms, r.prep_dp2d_ms, r.cusparse_ms,
        r.hbp_ms, r.speedup_vs_cusparse(), r.std_before, r.std_hash, r.ok ? "" : "  FAILED");
  }
  std::printf(
      "geomean preprocessing speedup of HBP-GPU over GPU sort2D / DP2D (same processor): %.2fx, "
      "%.2fx (paper: 3.53x, 3.67x)\n"
      "  reordering step alone (GPU, device time), sort2D / DP2D over the hash: %.2fx, %.2fx\n"
      "  over host sort2D / DP2D (1 thread): %.2fx, %.2fx; HBP-host over host sort2D / DP2D: "
      "%.2fx, %.2fx\n"
      "geomean HBP speedup over cuSPARSE: %.2fx\n",
      s.gpu_sort2d_vs_gpu, s.gpu_dp2d_vs_gpu, s.reorder_sort2d_vs_hash, s.reorder_dp2d_vs_hash,
      s.sort2d_vs_gpu, s.dp2d_vs_gpu, s.sort2d_vs_host, s.dp2d_vs_host, s.hbp_vs_cusparse);
  std::printf("HBP variants, speedup over cuSPARSE: geomean double, float; smallest\n");
  for (const Record& v : variant_summary(args, results))
    std::printf("  %-60s %6.3f %6.3f %6.3f\n", std::get<std::string>(v[0].second.v).c_str(),
                std::get<double>(v[1].second.v), std::get<double>(v[2].second.v),
                std::get<double>(v[3].second.v));
  const bool ok = std::all_of(results.begin(), results.end(), [](const Result& r) { return r.ok; });
  std::cerr << (ok ? "all results match the reference\n" : "SOME RESULTS FAILED\n");
  return ok ? 0 : 1;
}

Command command() {
  Command c;
  c.name = "hbp_bench";
  c.program = "";
  c.description =
      "HBP (paper 3, Sec. IV-B, IV-C): its preprocessing on the GPU and on the host against the\n"
      "sort2D and DP2D baselines, and its SpMV against CSR-Vector and cuSPARSE, per matrix,\n"
      "in every --variant. Writes hbp_bench.csv, hbp_variants.csv and hbp_bench.json into --out.";
  c.options = {
      kMatricesOption,
      {"gen", "SPEC",
       "a generated matrix (kspmv::gen spec); repeatable; without --gen a bounded default set "
       "runs (kron family included)"},
      {"no-default-gen", "", "no default set without --gen"},
      {"precision", "float|double|both", "default double"},
      {"reps", "N", "event-timed SpMV runs (default 20)"},
      {"prep-reps", "N", "preprocessing builds timed (default 5)"},
      {"host-max-nnz", "N",
       "host preprocessing (HBP-host, sort2D, DP2D) only up to N non-zeros (default 20000000) "
       "and 2^28 table slots"},
      {"variant", "SPEC",
       "an HBP configuration, key=value,... of rows, cols, fixed (the format's block_rows, "
       "block_cols, fixed_fraction), warps, shared_x, slice, ticket, registers (the kernel's "
       "launch "
       "plan), or "
       "default; repeatable, the first is the main table's (default: default)"},
      {"spmv-only", "", "no sort2D / DP2D baselines and no host builds"},
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

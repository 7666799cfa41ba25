// GPU SpMV benchmark: every CUDA kernel (and, with a CUDA Kokkos, the Kokkos CSR kernel on the
// GPU: kokkos-csr) against cuSPARSE on the same device buffers.
// Per matrix, precision and kernel: median of --reps event-timed runs after warm-up (every kernel
// of a matrix timed in the same rounds, one run of each per round), effective
// GB/s (docs/DESIGN.md "Measuring") and its ratio to a device-to-device copy measured in this run,
// GFLOP/s = 2 nnz / t, speedup over cuSPARSE CSR_ALG1, relative l2 error against the host
// reference (y poisoned with NaN before the checked run). Full-Overlap (matrix streamed from
// pinned host memory on every run, so its time includes the transfer) also reports the H2D copy
// of the same bytes alone and cuSPARSE copy-then-SpMV (that copy, then the cuSPARSE kernel),
// timed in the same rounds as Full-Overlap itself. Writes
// spmv_bench.csv, spmv_bench.json and summary.json into --out. The row "auto-tuned" is an
// Operator with Kernel::Auto and Options::autotune: after its tuning calls, the median kernel
// time of the kernel it kept. --large: matrices beyond a device's memory or 2^31 non-zeros, one
// CUDA operator each (the residency it chooses under --device-memory-cap): a streamed one timed
// against the bare copy of its bytes from pinned memory in the same rounds (over_h2d), every
// result checked on sampled rows (a full reference of 40 GB costs too much). --reorder: two rows
// of a CUDA operator (Kernel::Auto) on P A P^T or in column stripes (Options::reorder), timed in
// the same rounds as cuSPARSE on the caller's order: "reordered" takes x and returns y in the
// caller's order (gather and scatter included), "reordered-permuted" works in the permuted order
// (for stripes, the same), both checked on a poisoned y, with the reorder's set-up in SpMVs of
// that apply (reorder_spmvs; stripes: with the operator's preprocessing, which cuts them).
// summary.json carries the geomeans of both over cuSPARSE, auto_min_over_best (the least ratio,
// over the matrices and precisions, of the fastest kernel's time to the auto row's) and
// auto_choice_min_over_best (the same to the time of the chosen kernel's own row).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/memory.hpp"
#include "bench_common.hpp"
#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/registry.hpp"
#include "testing/reference.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;

// cuSPARSE first (the others' speedups are over it), every other CUDA row of the registry, auto,
// then the portable CSR kernel on the GPU where Kokkos has CUDA (kokkos-csr).
std::vector<BenchKernel> default_kernels() {
  std::vector<BenchKernel> kernels = {{Backend::Cuda, Kernel::Cusparse}};
  for (const KernelInfo& row : kernels_of(Backend::Cuda))
    if (row.kernel != Kernel::Cusparse) kernels.push_back({Backend::Cuda, row.kernel});
  kernels.push_back({Backend::Cuda, Kernel::Auto});
  for (const BenchKernel& k : kokkos_gpu_kernels())
    if (k.kernel == Kernel::Csr) kernels.push_back(k);
  return kernels;
}

struct Args {  // read_args() sets every field
  std::string matrices, out;
  std::vector<std::string> gens, precisions;
  std::vector<BenchKernel> kernels;
  std::vector<int> vector_sizes;  // extra CSR-Vector rows with a fixed vector size
  bool autotune = false;
  int reps = 0, device = 0;
  bool large = false;  // one operator per matrix (bench_large)
  Residency residency = Residency::Auto;
  std::size_t cap = 0;  // Options::device_memory_limit
  int sample_rows = 0;
  Reorder reorder = Reorder::None;  // the reordered rows (bench_reordered)
  Ordinal stripe_columns = 0;       // their Options::stripe_columns
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
    a.kernels.push_back(parse_bench_kernel(name));
  for (const auto& v : split(in.text("vector-sizes", ""), ','))
    a.vector_sizes.push_back(static_cast<int>(parse_integer(v, "--vector-sizes")));
  a.autotune = !in.flag("no-autotune");
  a.reps = static_cast<int>(in.integer("reps", 20, 1, 1000000));
  a.device = static_cast<int>(in.integer("device", 0, 0, 1023));
  a.large = in.flag("large");
  if (a.large && !in.has("kernels")) a.kernels = {BenchKernel{Backend::Cuda, Kernel::Auto}};
  if (a.large) {
    for (const BenchKernel& k : a.kernels)
      if (k.backend != Backend::Cuda)
        throw UsageError("--large runs the CUDA backend's kernels, not '" + to_string(k) + "'");
  }
  a.residency = parse_residency(in.text("residency", "auto"));
  a.cap = device_memory_cap(in);
  if (!a.large && (in.has("residency") || a.cap > 0))
    throw UsageError("--residency and --device-memory-cap apply to --large runs");
  a.sample_rows = static_cast<int>(in.integer("sample-rows", 4096, 1, 1 << 24));
  a.reorder = parse_reorder(in.text("reorder", "none"));
  a.stripe_columns = stripe_columns(in);
  if (a.large && a.reorder != Reorder::None) throw UsageError("--reorder and --large exclude");
  return a;
}

struct Result {
  std::string matrix, precision, kernel, note;
  std::string chosen;  // the auto row: the kernel the rule chose (its own row is timed too)
  std::string residency = "resident";  // "streamed": the matrix crosses to the device every run
  Ordinal m = 0, n = 0;
  Offset nnz = 0;
  double ms = NAN, gbps = NAN, copy_ratio = NAN, gflops = NAN, speedup = NAN, rel_error = NAN;
  double matrix_gb = NAN;  // the CSR's bytes (offsets of 32 bits where they fit)
  double cap_gb = NAN;     // Options::device_memory_limit (NaN: none)
  // Streamed: the bare H2D copy of the same bytes from pinned memory in the same rounds, its
  // bandwidth, and the streamed time over it; cuSPARSE's copy-then-SpMV (full-overlap rows).
  double h2d_ms = NAN, h2d_gbps = NAN, over_h2d = NAN, cusparse_copy_spmv_ms = NAN;
  // auto-tuned only: the operator's time over the kernel it kept, bare, for single applies and
  // for bursts of kBurst applies back to back (a solver's loop)
  double over_kernel = NAN, over_kernel_burst = NAN;
  double reorder_spmvs = NAN;  // reordered rows: the reorder's set-up over this row's apply
  bool ok = true;
};

template <class S>
double matrix_gigabytes(const CsrMatrix<S>& a) {
  const double offset = narrow_offsets(a.nnz()) ? sizeof(DeviceOffset) : sizeof(Offset);
  return (double(a.nnz()) * (sizeof(S) + sizeof(Ordinal)) + (a.nrows + 1.0) * offset) / 1e9;
}

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
  r.matrix_gb = matrix_gigabytes(a);
  std::cerr << "  " << r.precision << " auto-tuned ... " << std::flush;
  try {
    Options o;
    o.backend = Backend::Cuda, o.kernel = Kernel::Auto, o.autotune = true;
    o.devices = {args.device};
    const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                              a.ncols};
    auto op = cuda::make_operator(host, o, nullptr);
    do  // until the tuner has kept a kernel
      op->apply_device(S(1), dx.data(), S(0), dy.data(), stream);
    while (op->timings().tuning);
    op->synchronize();
    std::string trials;  // the tuner's medians, in the note: why it kept what it kept
    for (const TuneTrial& t : op->timings().trials)
      trials += (trials.empty() ? "" : ", ") + t.candidate + " " + fmt(1e3 * t.median_ms) + " us";
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
             (slow ? " (FLAG: tuned more than 10% slower)" : "") + "; tuning medians: " + trials;
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

// The error of a y given in the order of perm (entry i is y[perm[i]]) against ref.
template <class S>
double permuted_error(std::vector<S> y, const std::vector<Ordinal>& perm,
                      const std::vector<S>& ref) {
  std::vector<S> back(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) back[perm[i]] = y[i];
  return reference::rel_l2_error(back.data(), ref.data(), back.size());
}

// --reorder: the CUDA operator on P A P^T in the caller's order and in the permuted one, timed
// in the same rounds as cuSPARSE (`cusparse`) on the caller's buffers, each checked on a y
// poisoned first. --reorder auto: the permuted row's operator chose for the permuted order
// (Options::permuted_applies).
template <class S>
std::vector<Result> bench_reordered(const std::string& name, const CsrMatrix<S>& a,
                                    const std::vector<S>& x, const std::vector<S>& ref,
                                    cuda::DeviceSpmv<S>& cusparse, cuda::DeviceBuffer<S>& dx,
                                    cuda::DeviceBuffer<S>& dy, cudaStream_t stream,
                                    const Args& args, double copy) {
  std::vector<Result> rows(2);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Result& r = rows[i];
    r.matrix = name, r.precision = precision_name<S>();
    r.kernel = std::string(i == 0 ? "reordered:" : "reordered-permuted:") + to_string(args.reorder);
    r.m = a.nrows, r.n = a.ncols, r.nnz = a.nnz();
    r.matrix_gb = matrix_gigabytes(a);
  }
  std::cerr << "  " << rows[0].precision << " reorder " << to_string(args.reorder) << " ... "
            << std::flush;
  try {
    Options o;
    o.backend = Backend::Cuda, o.kernel = Kernel::Auto, o.reorder = args.reorder;
    o.devices = {args.device}, o.validate = false, o.stripe_columns = args.stripe_columns;
    Operator<S> op(a, o);
    // Auto chooses for the permuted order apart (Options::permuted_applies): its own operator.
    std::optional<Operator<S>> own;
    if (args.reorder == Reorder::Auto) {
      o.permuted_applies = true;
      own.emplace(a, o);
    }
    Operator<S>& op_p = own ? *own : op;
    const std::vector<Ordinal>& perm = op_p.permutation();
    cuda::DeviceBuffer<S> dxp(a.ncols), dyp(a.nrows);
    std::vector<S> xp(x.size()), y(a.nrows);
    for (std::size_t i = 0; i < xp.size(); ++i) xp[i] = perm.empty() ? x[i] : x[perm[i]];
    dxp.upload(xp.data());
    const auto caller = [&] {
      op.use_permuted_order(false);
      op.apply(stream, S(1), dx.data(), S(0), dy.data());
    };
    const auto permuted = [&] {
      op_p.use_permuted_order(true);
      op_p.apply(stream, S(1), dxp.data(), S(0), dyp.data());
    };
    for (int i = 0; i < 2; ++i) {
      cuda::DeviceBuffer<S>& out = i == 0 ? dy : dyp;
      KSPMV_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), stream));
      if (i == 0)
        caller();
      else
        permuted();
      KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
      out.download(y.data());
      rows[i].rel_error = i == 0 || perm.empty()
                              ? reference::rel_l2_error(y.data(), ref.data(), y.size())
                              : permuted_error(y, perm, ref);
      rows[i].ok = rows[i].rel_error <= reference::tolerance<S>();
    }
    const auto base = [&] { cusparse.run(S(1), dx.data(), S(0), dy.data(), stream); };
    const std::vector<double> t = time_interleaved_ms({base, caller, permuted}, stream, args.reps);
    for (int i = 0; i < 2; ++i) {
      Operator<S>& used = i == 0 ? op : op_p;
      const Timings ot = used.timings();
      Result& r = rows[i];
      r.ms = t[i + 1];
      r.gbps = effective_bytes(a) / (r.ms * 1e6);
      r.copy_ratio = r.gbps / copy;
      r.gflops = 2.0 * r.nnz / (r.ms * 1e6);
      r.speedup = t[0] / r.ms;
      // Stripes are cut and uploaded in the operator's preprocessing, a permutation before it.
      const bool stripes = used.reorder() == Reorder::Stripes;
      const double setup = ot.reorder_ms + (stripes ? ot.preprocess_ms : 0);
      r.reorder_spmvs = setup / r.ms;
      r.note = std::string("kept ") + to_string(used.reorder()) + ", kernel " +
               to_string(used.kernel()) + ", set-up " + fmt(setup) +
               (stripes ? " ms with the stripes' preprocessing (" : " ms (") +
               fmt(r.reorder_spmvs) + " SpMVs), model " + fmt(ot.reorder_model);
    }
    std::cerr << fmt(rows[0].ms) << " / " << fmt(rows[1].ms) << " ms, x" << fmt(rows[0].speedup)
              << " / x" << fmt(rows[1].speedup) << " cuSPARSE, " << rows[0].note
              << "; permuted: " << rows[1].note << "\n";
  } catch (const Error& e) {
    for (Result& r : rows) r.ok = false, r.note = e.what();
    std::cerr << "ERROR " << e.what() << "\n";
  }
  return rows;
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
  std::vector<std::pair<BenchKernel, int>> cases;
  for (const BenchKernel& k : args.kernels) cases.emplace_back(k, 0);
  for (const int v : args.vector_sizes)
    cases.emplace_back(BenchKernel{Backend::Cuda, Kernel::CsrVector}, v);
  std::vector<Result> rows;
  std::vector<std::unique_ptr<cuda::DeviceSpmv<S>>> kernels;
  for (const auto& [bk, v] : cases) {
    const Kernel k = bk.kernel;
    Result r;
    r.matrix = name, r.precision = precision;
    r.kernel = to_string(bk) + (v > 0 ? ":v=" + std::to_string(v) : std::string());
    r.m = a.nrows, r.n = a.ncols, r.nnz = nnz;
    r.matrix_gb = matrix_gigabytes(a);
    if (k == Kernel::FullOverlap) r.residency = "streamed";
    std::unique_ptr<cuda::DeviceSpmv<S>> spmv;
    try {
      const bool cuda_auto = bk.backend == Backend::Cuda && k == Kernel::Auto;
      const Kernel resolved =
          cuda_auto ? analysis::auto_kernel(analysis::row_stats(a.row_ptr.data(), a.nrows, a.ncols),
                                            sizeof(S))
                    : k;
      if (cuda_auto) {
        r.chosen = to_string(resolved);
        r.note = "rule chose " + r.chosen;
      }
      spmv = v > 0 ? cuda::make_csr_vector(d, host, {v, 0})
                   : make_bench_spmv<S>({bk.backend, resolved}, d, a);
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
    if (kernels[i] && cases[i].first.kernel != Kernel::FullOverlap) {
      cuda::DeviceSpmv<S>* spmv = kernels[i].get();
      bodies.push_back([&, spmv] { spmv->run(S(1), dx.data(), S(0), dy.data(), stream.get()); });
      timed.push_back(i);
    }
  }
  const std::vector<double> times = time_interleaved_ms(bodies, stream.get(), args.reps);
  for (std::size_t j = 0; j < timed.size(); ++j) rows[timed[j]].ms = times[j];
  double cusparse_ms = NAN;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (cases[i].first.backend == Backend::Cuda && cases[i].first.kernel == Kernel::Cusparse &&
        cases[i].second == 0)
      cusparse_ms = rows[i].ms;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Result& r = rows[i];
    if (kernels[i] && cases[i].first.kernel == Kernel::FullOverlap) {
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
      r.over_h2d = r.ms / r.h2d_ms;
      r.h2d_gbps = double(mbytes) / (r.h2d_ms * 1e6);
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
  if (args.reorder != Reorder::None) {
    const auto cusparse = cuda::make_device_spmv(Kernel::Cusparse, d, host);
    for (Result& r : bench_reordered(name, a, x, ref, *cusparse, dx, dy, stream.get(), args, copy))
      out.push_back(r);
  }
}

// Sampled rows of a matrix too large for a full reference: the first and last ones, those around
// a quarter, half and three quarters, and random others (`count` in all, at most every row).
std::vector<Ordinal> sample_rows(Ordinal m, int count, std::uint64_t seed) {
  std::vector<Ordinal> rows;
  for (const double at : {0.0, 0.25, 0.5, 0.75, 1.0})
    for (Ordinal d = 0; d < 3; ++d)
      rows.push_back(std::clamp<Ordinal>(static_cast<Ordinal>(at * (m - 1)) + d - 1, 0, m - 1));
  std::mt19937_64 gen(seed);
  while (static_cast<int>(rows.size()) < count) rows.push_back(static_cast<Ordinal>(gen() % m));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// --large: one CUDA operator (Options::kernel, residency and device memory cap) on the matrix,
// checked on sampled rows with y NaN-poisoned first (and every row written), then timed on device
// vectors: a streamed one in rounds with the bare H2D copy of the bytes it sends (columns, values,
// 32-bit row pointers) from pinned memory into a 1 GiB device buffer, a resident one alone.
template <class S>
Result bench_large(const std::string& name, const CsrMatrix<S>& a, Kernel kernel, const Args& args,
                   double copy) {
  Result r;
  r.matrix = name, r.precision = precision_name<S>();
  r.m = a.nrows, r.n = a.ncols, r.nnz = a.nnz();
  r.matrix_gb = matrix_gigabytes(a);
  r.cap_gb = args.cap > 0 ? args.cap / 1e9 : NAN;
  std::cerr << "  " << r.precision << " operator (" << to_string(kernel) << ", "
            << to_string(args.residency) << ", " << fmt(r.matrix_gb) << " GB) ... " << std::flush;
  try {
    Options o;
    o.backend = Backend::Cuda, o.kernel = kernel, o.residency = args.residency;
    o.device_memory_limit = args.cap;
    o.devices = {args.device};
    const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                              a.ncols};
    const auto t0 = Clock::now();
    auto op = cuda::make_operator(host, o, nullptr);
    const double build_s = ms_since(t0) / 1e3;
    r.kernel = to_string(op->kernel());
    r.residency = to_string(op->residency());
    const std::vector<S> x = random_values<S>(a.ncols, std::hash<std::string>{}(name) ^ sizeof(S));
    const std::vector<Ordinal> rows = sample_rows(a.nrows, args.sample_rows, a.nnz());
    std::vector<S> want(rows.size()), got(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      long double sum = 0;
      for (Offset k = a.row_ptr(rows[i]); k < a.row_ptr(rows[i] + 1); ++k)
        sum += static_cast<long double>(a.values(k)) * x[a.col_idx(k)];
      want[i] = static_cast<S>(sum);
    }
    cuda::DeviceBuffer<S> dx(a.ncols), dy(a.nrows);
    dx.upload(x.data());
    cuda::Stream stream;
    KSPMV_CUDA_CHECK(cudaMemsetAsync(dy.data(), 0xff, dy.bytes(), stream.get()));
    op->apply_device(S(1), dx.data(), S(0), dy.data(), stream.get());
    op->synchronize();
    std::vector<S> y(a.nrows);
    dy.download(y.data());
    const auto unwritten = std::count_if(y.begin(), y.end(), [](S v) { return !std::isfinite(v); });
    for (std::size_t i = 0; i < rows.size(); ++i) got[i] = y[rows[i]];
    r.rel_error =
        unwritten > 0 ? INFINITY : reference::rel_l2_error(got.data(), want.data(), got.size());
    r.ok = r.rel_error <= reference::tolerance<S>();
    r.note = "built in " + fmt(build_s) + " s; checked on " + std::to_string(rows.size()) +
             " sampled rows" +
             (unwritten > 0 ? ", " + std::to_string(unwritten) + " rows NaN" : "");
    const auto run = [&] { op->apply_device(S(1), dx.data(), S(0), dy.data(), stream.get()); };
    if (op->residency() == Residency::Streamed) {
      // The bytes the ring sends: columns and values from the arrays it pinned in place, and
      // 32-bit row pointers (from a pinned buffer of their size).
      const std::size_t chunk = std::size_t(1) << 30;
      cuda::DeviceBuffer<unsigned char> staging(chunk);
      cuda::PinnedBuffer<DeviceOffset> rows32(std::size_t(a.nrows) + 1);
      const std::vector<std::pair<const void*, std::size_t>> parts = {
          {a.col_idx.data(), std::size_t(a.nnz()) * sizeof(Ordinal)},
          {a.values.data(), std::size_t(a.nnz()) * sizeof(S)},
          {rows32.data(), rows32.size() * sizeof(DeviceOffset)}};
      std::size_t bytes = 0;
      for (const auto& part : parts) bytes += part.second;
      const auto copy_matrix = [&] {
        for (const auto& [src, size] : parts)
          for (std::size_t at = 0; at < size; at += chunk)
            KSPMV_CUDA_CHECK(
                cudaMemcpyAsync(staging.data(), static_cast<const unsigned char*>(src) + at,
                                std::min(chunk, size - at), cudaMemcpyHostToDevice, stream.get()));
      };
      const std::vector<double> t =
          time_interleaved_ms({run, copy_matrix}, stream.get(), args.reps);
      r.ms = t[0], r.h2d_ms = t[1];
      r.over_h2d = r.ms / r.h2d_ms;
      r.h2d_gbps = double(bytes) / (r.h2d_ms * 1e6);
    } else {
      r.ms = time_ms(run, stream.get(), args.reps);
    }
    r.gbps = effective_bytes(a) / (r.ms * 1e6);
    r.copy_ratio = r.gbps / copy;
    r.gflops = 2.0 * r.nnz / (r.ms * 1e6);
    std::cerr << r.kernel << ", " << r.residency << ": " << fmt(r.ms) << " ms, " << fmt(r.gbps)
              << " GB/s"
              << (std::isfinite(r.over_h2d) ? ", " + fmt(r.over_h2d) + "x the H2D copy" : "")
              << ", err " << fmt(r.rel_error) << (r.ok ? "" : "  FAILED CHECK") << "\n";
  } catch (const UnsupportedError& e) {  // a kernel that does not take the matrix: said, not run
    r.kernel = to_string(kernel);
    r.note = std::string("refused: ") + e.what();
    std::cerr << r.note << "\n";
  } catch (const Error& e) {
    r.ok = false;
    r.note = e.what();
    std::cerr << "ERROR " << e.what() << "\n";
  }
  return r;
}

// The CSV columns, in order; the JSON of a result adds full_overlap_ms on Full-Overlap rows.
Record record(const Result& r) {
  return {{"matrix", r.matrix},
          {"rows", r.m},
          {"cols", r.n},
          {"nnz", r.nnz},
          {"precision", r.precision},
          {"kernel", r.kernel},
          {"residency", r.residency},
          {"device_memory_cap_gb", r.cap_gb},
          {"matrix_gb", r.matrix_gb},
          {"ms", r.ms},
          {"gbps", r.gbps},
          {"copy_ratio", r.copy_ratio},
          {"gflops", r.gflops},
          {"speedup_vs_cusparse", r.speedup},
          {"rel_error", r.rel_error},
          {"ok", r.ok},
          {"h2d_ms", r.h2d_ms},
          {"h2d_gbps", r.h2d_gbps},
          {"over_h2d", r.over_h2d},
          {"cusparse_copy_spmv_ms", r.cusparse_copy_spmv_ms},
          {"reorder_spmvs", r.reorder_spmvs},
          {"note", r.note}};
}

// The geomean of speedup_vs_cusparse over the rows whose kernel starts with `prefix` (NaN: none).
double geomean_speedup(const std::vector<Result>& results, const std::string& prefix) {
  double logs = 0;
  int count = 0;
  for (const Result& r : results)
    if (r.kernel.rfind(prefix, 0) == 0 && std::isfinite(r.speedup) && r.ok)
      logs += std::log(r.speedup), ++count;
  return count ? std::exp(logs / count) : NAN;
}

// The least, over matrices and precisions, of the fastest resident CUDA kernel's time (the
// registry's rows that Auto may pick: no fixed lanes, no autotuning, no reordering, no Kokkos)
// over the auto row's, or with `by_choice` over the row of the kernel the rule chose (the auto
// row is a second operator of that kernel: on launch-bound matrices, 5-10 us a call, two
// operators of one kernel differed by up to 5%). NaN: no auto row.
double auto_min_over_best(const std::vector<Result>& results, bool by_choice) {
  const auto candidate = [](const Result& r) {
    const std::string& k = r.kernel;
    return r.ok && r.residency == "resident" && k.find(":v=") == std::string::npos &&
           k.rfind("reordered", 0) != 0 && k.rfind("kokkos-", 0) != 0 && k != "auto-tuned";
  };
  double least = NAN;
  for (const Result& a : results) {
    if (a.kernel != "auto") continue;
    double best = by_choice ? INFINITY : a.ms, mine = a.ms;
    for (const Result& r : results) {
      if (r.matrix != a.matrix || r.precision != a.precision || !candidate(r)) continue;
      if (by_choice && r.kernel == "auto") continue;
      best = std::min(best, r.ms);
      if (by_choice && r.kernel == a.chosen) mine = r.ms;
    }
    if (std::isfinite(best / mine) && !(least <= best / mine)) least = best / mine;
  }
  return least;
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
      {{"device", device_name(args.device)},
       {"date", utc_date()},
       {"copy_gbps", copy},
       {"reorder_geomean_vs_cusparse", geomean_speedup(results, "reordered:")},
       {"reorder_permuted_geomean_vs_cusparse", geomean_speedup(results, "reordered-permuted:")},
       {"auto_min_over_best", auto_min_over_best(results, false)},
       {"auto_choice_min_over_best", auto_min_over_best(results, true)}},
      rows, full,
      {"matrix", "nnz", "precision", "kernel", "residency", "device_memory_cap_gb", "matrix_gb",
       "ms", "gbps", "copy_ratio", "over_h2d", "speedup_vs_cusparse", "reorder_spmvs",
       "rel_error"});
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
        if (args.large) {
          for (const BenchKernel& k : args.kernels)
            results.push_back(bench_large(name, a, k.kernel, args, copy));
        } else {
          bench_matrix(name, a, args, copy, results);
        }
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
       "default: cusparse (the baseline, first), every other CUDA kernel of the registry, auto, "
       "and with a CUDA Kokkos kokkos-csr (the Kokkos CSR kernel on the GPU; also kokkos-coo, "
       "kokkos-csc)"},
      {"precision", "float|double|both", "default both"},
      {"reps", "N", "event-timed runs per kernel (default 20)"},
      kDeviceOption,
      {"no-autotune", "", "leave out the auto-tuned row (Kernel::Auto with Options::autotune)"},
      {"vector-sizes", "2,4,...",
       "also run CSR-Vector with each of these lanes per row (rows named csr-vector:v=N; "
       "csr-vector alone picks its own)"},
      {"large", "",
       "one operator per matrix and kernel (--kernels, default auto) for matrices beyond the "
       "device's memory or 2^31 non-zeros: residency, over_h2d of a streamed one, checked on "
       "sampled rows"},
      {"residency", "auto|resident|streamed", "with --large (default auto)"},
      kDeviceMemoryCapOption,
      {"sample-rows", "N", "with --large: rows checked against the reference (default 4096)"},
      {"reorder", "none|auto|rcm|degree|bfs|stripes",
       "also the CUDA operator (kernel auto) on P A P^T, in the caller's order and in the "
       "permuted one, against cuSPARSE in the same rounds (default none)"},
      kStripeColumnsOption,
      kOutOption,
  };
  c.run = run;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

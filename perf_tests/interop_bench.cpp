// What a GPU application pays for using kspmv::Operator rather than a bare kernel (issue
// "Inside a Kokkos application on the GPU"), one H100 figure each, every result checked against
// the host reference on a NaN-poisoned y:
// - device_view_apply_over_kernel: Operator::apply on device vectors (CudaSpace Views on a
//   Kokkos::Cuda instance when Kokkos has CUDA, a cudaStream_t otherwise) over the same kernel
//   run bare, event-timed in the same rounds (laplace2d --apply-n^2, double);
// - spmm4_over_4_applies: one apply on 4 vectors over 4 single-vector applies (--spmm-n^2);
// - graph_replay_ok: 10 applies captured in a CUDA graph and replayed equal 10 applies on the
//   stream bit for bit; graph_ms_per_apply beside stream_ms_per_apply;
// - refresh_over_upload: update_values from host memory over one cudaMemcpy of the values
//   (wall-clock medians); refresh_device_ms: from device memory;
// - two_instances_over_serial: two operators, each built on its own instance (a Kokkos::Cuda
//   instance when Kokkos has CUDA, a cudaStream_t otherwise: the set-up on the caller's
//   instance), applied 10 times each on their two instances at once over the same applies back
//   to back on one, event-timed in the same rounds (--overlap-gen, csr-vector: 500 rows of 4000
//   non-zeros, a warp a row, 63 blocks on 132 SMs, so that each apply leaves most of the GPU
//   idle and is bound by its warps' latency, not by DRAM or L2: two such applies can share the
//   GPU; 2000 rows, 0.052 ms an apply on an H200, ran at 1.85 TB/s and gave 0.913; the bar is
//   0.6);
// - kokkos_cuda_tests_passed / _total: copied from --tests-json (the GPU suite's kokkos-cuda
//   step), null without it;
// - kokkos_csr_geomean_vs_cusparse: the portable Kokkos CSR kernel on the GPU (kokkos-default
//   with a CUDA Kokkos) against cuSPARSE CSR_ALG1 on the same buffers, event-timed in the same
//   rounds, geometric mean of cuSPARSE's time over its on the --csr-gen matrices (double); null
//   when Kokkos' default execution space is not a GPU;
// - complex_over_cusparse: Operator<Kokkos::complex<double>> (CUDA, Auto) on device vectors over
//   cuSPARSE's complex SpMV (CUDA_C_64F, CSR_ALG1) on the same matrix, event-timed in the same
//   rounds (laplace2d --apply-n^2 with random imaginary parts; the bar is 1.1);
// - kspmv_over_kokkossparse, kspmv_over_kokkossparse_native (built with Kokkos Kernels and a
//   CUDA Kokkos only, null otherwise): kspmv::spmv(exec, handle, "N", ...) on a
//   KokkosSparse::CrsMatrix in CudaSpace over KokkosSparse::spmv(exec, &handle, "N", ...) on the
//   same matrix, vectors and instance, geometric mean over the --csr-gen matrices and the
//   --matrices files of >= 40000 entries (double):
//   against its default algorithm (cuSPARSE underneath where Kokkos Kernels has its CUDA TPLs;
//   the bar is 0.95) and against SPMV_NATIVE, its own kernels (the bar is 0.8); in the details,
//   each call's host time (20 calls back to back) of kspmv::spmv and KokkosSparse::spmv.
// Writes interop_bench.json (key "interop") into --out.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/complex.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/cusparse_spmv.hpp"
#include "bench_common.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#if defined(KSPMV_HAVE_KOKKOSKERNELS) && defined(KOKKOS_ENABLE_CUDA)
#include <KokkosSparse_spmv.hpp>

#include "kspmv/interop/kokkos_sparse.hpp"
#endif

namespace {

using namespace kspmv;
using namespace kspmv::bench;
namespace fs = std::filesystem;

struct Args {
  std::string out, tests_json, matrices;
  std::vector<std::string> csr_gens;
  std::string overlap_gen;
  int reps = 0, device = 0;
  Ordinal apply_n = 0, spmm_n = 0;
};

// The application's queue: its stream and, when Kokkos has CUDA, one Kokkos::Cuda instance of
// it, built once as an application holds it (building one allocates, and destroying it frees,
// which a stream being captured into a graph does not allow).
struct Queue {
  cudaStream_t stream;
#ifdef KOKKOS_ENABLE_CUDA
  Kokkos::Cuda exec{stream};
#endif
};

// Device vectors as the application holds them: CudaSpace Views on its instance when Kokkos has
// CUDA, raw pointers on its stream otherwise.
void apply(Operator<double>& op, const Queue& q, double alpha, const double* x, double beta,
           double* y, int k = 1) {
#ifdef KOKKOS_ENABLE_CUDA
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const Kokkos::Cuda& exec = q.exec;
  const auto m = static_cast<std::size_t>(op.nrows()), n = static_cast<std::size_t>(op.ncols());
  if (k == 1) {
    op.apply(exec, alpha, Kokkos::View<const double*, Kokkos::CudaSpace, Unmanaged>(x, n), beta,
             Kokkos::View<double*, Kokkos::CudaSpace, Unmanaged>(y, m));
    return;
  }
  const auto kk = static_cast<std::size_t>(k);
  op.apply(exec, alpha,
           Kokkos::View<const double**, Kokkos::LayoutLeft, Kokkos::CudaSpace, Unmanaged>(x, n, kk),
           beta,
           Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::CudaSpace, Unmanaged>(y, m, kk));
#else
  op.apply(q.stream, alpha, x, beta, y, k);
#endif
}

// An operator set up on the application's instance (its stream without a CUDA Kokkos).
Operator<double> build_on(const Queue& q, const CsrMatrix<double>& a, const Options& o) {
#ifdef KOKKOS_ENABLE_CUDA
  return Operator<double>(q.exec, a, o);
#else
  return Operator<double>(q.stream, a, o);
#endif
}

template <class S>
std::vector<S> download(const cuda::DeviceBuffer<S>& d) {
  std::vector<S> h(d.size());
  d.download(h.data());
  return h;
}

// The relative error against `ref` of y after run() on a NaN-poisoned y, on `stream`.
template <class S, class Run>
double poisoned_run_error(cuda::DeviceBuffer<S>& y, const std::vector<S>& ref, cudaStream_t stream,
                          const Run& run) {
  KSPMV_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xff, y.bytes(), stream));
  run();
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  return reference::rel_l2_error(download(y).data(), ref.data(), ref.size());
}

// y = A x for k columns of x through the operator, against the reference column by column.
double checked_error(Operator<double>& op, const CsrMatrix<double>& a,
                     const cuda::DeviceBuffer<double>& dx, cuda::DeviceBuffer<double>& dy,
                     const Queue& q, int k) {
  KSPMV_CUDA_CHECK(cudaMemsetAsync(dy.data(), 0xff, dy.bytes(), q.stream));
  apply(op, q, 1.0, dx.data(), 0.0, dy.data(), k);
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(q.stream));
  const auto x = download(dx), y = download(dy);
  const std::size_t m = a.nrows, n = a.ncols;
  double worst = 0;
  for (int c = 0; c < k; ++c) {
    std::vector<double> ref(m);
    reference::spmv(1.0, a, x.data() + c * n, 0.0, ref.data());
    worst = std::max(worst, reference::rel_l2_error(y.data() + c * m, ref.data(), m));
  }
  return worst;
}

Options cuda_auto(int device) {
  Options o;
  o.backend = Backend::Cuda;
  o.devices = {device};
  return o;
}

// Wall-clock median of `reps` calls of body after one warm-up call.
template <class Body>
double wall_median_ms(const Body& body, int reps) {
  body();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    body();
    t.push_back(ms_since(t0));
  }
  return median(t);
}

// "key": N in a JSON file, as a Value (null when absent).
Value json_number(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  std::smatch m;
  const std::string s = text.str();
  if (std::regex_search(s, m, std::regex("\"" + key + "\"\\s*:\\s*([0-9]+)")))
    return Value(std::stoll(m[1]));
  return Value(nullptr);
}

int run(const ParsedArgs& parsed) {
  Args args;
  args.out = parsed.text("out", ".");
  args.tests_json = parsed.text("tests-json", "");
  args.reps = static_cast<int>(parsed.integer("reps", 50, 3, 100000));
  args.device = static_cast<int>(parsed.integer("device", 0, 0, 1023));
  args.apply_n = static_cast<Ordinal>(parsed.integer("apply-n", 2048, 2, 20000));
  args.spmm_n = static_cast<Ordinal>(parsed.integer("spmm-n", 4096, 2, 20000));
  args.csr_gens = parsed.all("csr-gen");
  args.matrices = parsed.text("matrices", "");
  args.overlap_gen = parsed.text("overlap-gen", "uniform:rows=500,k=4000,cols=200000");
  if (args.csr_gens.empty())
    args.csr_gens = {"laplace2d:n=2048",     "stencil27:n=100", "uniform:rows=4000000,k=8",
                     "kron:scale=20",        "rgg:scale=21",    "kmer:rows=10000000",
                     "fullchip:rows=1000000"};
  if (cuda::device_count() <= args.device)
    throw InvalidArgument("no CUDA device " + std::to_string(args.device));
  KSPMV_CUDA_CHECK(cudaSetDevice(args.device));
  const cuda::Stream stream;
  const cudaStream_t s = stream.get();
  const Queue q{s};
  const double tol = reference::tolerance<double>();
  bool ok = true;
  Record interop, details;

  {  // the operator's apply on device vectors against its kernel, bare
    const std::string spec = "laplace2d:n=" + std::to_string(args.apply_n);
    const auto a = load_matrix<double>("gen:" + spec);
    Operator<double> op(a, cuda_auto(args.device));
    const auto p =
        CsrPointers<double>{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
    const auto d =
        std::make_shared<const cuda::DeviceCsr<double>>(cuda::DeviceCsr<double>::upload(p));
    const auto bare = cuda::make_device_spmv(op.kernel(), d, p);
    cuda::DeviceBuffer<double> dx(a.ncols), dy(a.nrows);
    const auto x = test::random_vector<double>(a.ncols, 1);
    dx.upload(x.data());
    const double err = checked_error(op, a, dx, dy, q, 1);
    const auto t = time_interleaved_ms({[&] { apply(op, q, 1.0, dx.data(), 0.0, dy.data()); },
                                        [&] { bare->run(1.0, dx.data(), 0.0, dy.data(), s); }},
                                       s, args.reps);
    interop.emplace_back("device_view_apply_over_kernel", t[0] / t[1]);
    details.emplace_back("apply_matrix", spec);
    details.emplace_back("apply_kernel", to_string(op.kernel()));
    details.emplace_back("apply_ms", t[0]);
    details.emplace_back("kernel_ms", t[1]);
    details.emplace_back("apply_rel_error", err);
    ok = ok && err <= tol;
    std::cerr << spec << ": apply " << t[0] << " ms, kernel " << t[1] << " ms ("
              << to_string(op.kernel()) << "), error " << err << "\n";

    // 10 applies captured in a graph against 10 on the stream, from the same y.
    const auto y0 = test::random_vector<double>(a.nrows, 2);
    const auto ten = [&] {
      for (int i = 0; i < 10; ++i) apply(op, q, 1.0, dx.data(), 0.5, dy.data());
    };
    dy.upload(y0.data());
    ten();
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(s));
    const auto on_stream = download(dy);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    KSPMV_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    ten();
    KSPMV_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    KSPMV_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    dy.upload(y0.data());
    KSPMV_CUDA_CHECK(cudaGraphLaunch(exec, s));
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(s));
    const bool same = download(dy) == on_stream;
    const auto g = time_interleaved_ms({[&] { KSPMV_CUDA_CHECK(cudaGraphLaunch(exec, s)); }, ten},
                                       s, args.reps);
    KSPMV_CUDA_CHECK(cudaGraphExecDestroy(exec));
    KSPMV_CUDA_CHECK(cudaGraphDestroy(graph));
    interop.emplace_back("graph_replay_ok", same);
    details.emplace_back("graph_ms_per_apply", g[0] / 10);
    details.emplace_back("stream_ms_per_apply", g[1] / 10);
    ok = ok && same;
    std::cerr << "graph replay " << (same ? "equals" : "DIFFERS FROM") << " the stream; "
              << g[0] / 10 << " against " << g[1] / 10 << " ms per apply\n";

    // New values: from host memory against one upload of them, and from device memory.
    std::vector<double> values(a.values.data(), a.values.data() + a.nnz());
    for (double& v : values) v *= 2;
    const auto nnz = static_cast<std::size_t>(a.nnz());
    cuda::DeviceBuffer<double> dvals(nnz);
    const double refresh =
        wall_median_ms([&] { op.update_values(values.data(), nnz, false); }, args.reps);
    const double upload = wall_median_ms([&] { dvals.upload(values.data()); }, args.reps);
    const double refresh_device =
        wall_median_ms([&] { op.update_values(dvals.data(), nnz, true); }, args.reps);
    CsrMatrix<double> doubled = a;
    doubled.values = make_host_view<double>("values", nnz);
    std::copy(values.begin(), values.end(), doubled.values.data());
    const double refreshed_err = checked_error(op, doubled, dx, dy, q, 1);
    interop.emplace_back("refresh_over_upload", refresh / upload);
    details.emplace_back("refresh_ms", refresh);
    details.emplace_back("upload_values_ms", upload);
    details.emplace_back("refresh_device_ms", refresh_device);
    details.emplace_back("refresh_rel_error", refreshed_err);
    ok = ok && refreshed_err <= tol;
    std::cerr << "update_values " << refresh << " ms (device " << refresh_device
              << " ms) against an upload of " << upload << " ms, error " << refreshed_err << "\n";
  }

  {  // 4 vectors at once against 4 applies
    const std::string spec = "laplace2d:n=" + std::to_string(args.spmm_n);
    const auto a = load_matrix<double>("gen:" + spec);
    Operator<double> op(a, cuda_auto(args.device));
    const std::size_t m = a.nrows, n = a.ncols;
    cuda::DeviceBuffer<double> dx(4 * n), dy(4 * m);
    const auto x = test::random_vector<double>(4 * n, 3);
    dx.upload(x.data());
    const double err = checked_error(op, a, dx, dy, q, 4);
    const auto t =
        time_interleaved_ms({[&] { apply(op, q, 1.0, dx.data(), 0.0, dy.data(), 4); },
                             [&] {
                               for (std::size_t c = 0; c < 4; ++c)
                                 apply(op, q, 1.0, dx.data() + c * n, 0.0, dy.data() + c * m);
                             }},
                            s, std::max(3, args.reps / 5));
    interop.emplace_back("spmm4_over_4_applies", t[0] / t[1]);
    details.emplace_back("spmm_matrix", spec);
    details.emplace_back("spmm4_ms", t[0]);
    details.emplace_back("four_applies_ms", t[1]);
    details.emplace_back("spmm_rel_error", err);
    ok = ok && err <= tol;
    std::cerr << spec << ": 4 vectors " << t[0] << " ms, 4 applies " << t[1] << " ms, error " << err
              << "\n";
  }

  {  // two operators on two instances at once against the same applies back to back
    constexpr int kApplies = 10;
    const cuda::Stream stream_a, stream_b;
    const Queue qa{stream_a.get()}, qb{stream_b.get()};
    const auto a = load_matrix<double>("gen:" + args.overlap_gen + ",seed=1");
    const auto b = load_matrix<double>("gen:" + args.overlap_gen + ",seed=2");
    Options o = cuda_auto(args.device);
    o.kernel = Kernel::CsrVector;
    Operator<double> opa = build_on(qa, a, o), opb = build_on(qb, b, o);
    cuda::DeviceBuffer<double> xa(a.ncols), ya(a.nrows), xb(b.ncols), yb(b.nrows);
    const auto x = test::random_vector<double>(std::max(a.ncols, b.ncols), 4);
    xa.upload(x.data());
    xb.upload(x.data());
    const cuda::Event fork(false), join(false);
    const auto t =
        time_interleaved_ms({[&] {
                               for (int i = 0; i < kApplies; ++i) {
                                 apply(opa, qa, 1.0, xa.data(), 0.0, ya.data());
                                 apply(opb, qa, 1.0, xb.data(), 0.0, yb.data());
                               }
                             },
                             [&] {
                               fork.record(qa.stream);
                               KSPMV_CUDA_CHECK(cudaStreamWaitEvent(qb.stream, fork.get(), 0));
                               for (int i = 0; i < kApplies; ++i) {
                                 apply(opa, qa, 1.0, xa.data(), 0.0, ya.data());
                                 apply(opb, qb, 1.0, xb.data(), 0.0, yb.data());
                               }
                               join.record(qb.stream);
                               KSPMV_CUDA_CHECK(cudaStreamWaitEvent(qa.stream, join.get(), 0));
                             }},
                            qa.stream, args.reps);
    const double err =
        std::max(checked_error(opa, a, xa, ya, qa, 1), checked_error(opb, b, xb, yb, qb, 1));
    interop.emplace_back("two_instances_over_serial", t[1] / t[0]);
    details.emplace_back("overlap_matrix", args.overlap_gen);
    details.emplace_back("overlap_apply_ms", t[0] / (2 * kApplies));
    details.emplace_back("overlap_serial_ms", t[0]);
    details.emplace_back("overlap_concurrent_ms", t[1]);
    details.emplace_back("overlap_rel_error", err);
    ok = ok && err <= tol;
    std::cerr << args.overlap_gen << " twice: " << 2 * kApplies << " applies back to back " << t[0]
              << " ms, on two instances " << t[1] << " ms, error " << err << "\n";
  }

  {  // complex double: the operator on device vectors against cuSPARSE's complex SpMV
    using Z = Kokkos::complex<double>;
    using C = cuda::Complex<double>;  // the same layout (backends/cuda/complex.hpp)
    const std::string spec = "laplace2d:n=" + std::to_string(args.apply_n);
    const auto a = gen::with_imaginary_parts<Z>(load_matrix<double>("gen:" + spec), 8);
    Operator<Z> op(a, cuda_auto(args.device));
    const CsrPointers<C> p{a.row_ptr.data(), a.col_idx.data(),
                           reinterpret_cast<const C*>(a.values.data()), a.nrows, a.ncols};
    const auto cusparse = cuda::make_cusparse(
        std::make_shared<const cuda::DeviceCsr<C>>(cuda::DeviceCsr<C>::upload(p)));
    cuda::DeviceBuffer<Z> dx(a.ncols), dy(a.nrows);
    const auto x = test::random_vector<Z>(a.ncols, 6);
    dx.upload(x.data());
    std::vector<Z> ref(a.nrows);
    reference::spmv(Z(1), a, x.data(), Z(0), ref.data());
    const auto ours = [&] { op.apply(s, Z(1), dx.data(), Z(0), dy.data()); };
    const auto theirs = [&] {
      cusparse->run(C(1), reinterpret_cast<const C*>(dx.data()), C(0),
                    reinterpret_cast<C*>(dy.data()), s);
    };
    const double err =
        std::max(poisoned_run_error(dy, ref, s, ours), poisoned_run_error(dy, ref, s, theirs));
    const auto t = time_interleaved_ms({ours, theirs}, s, args.reps);
    interop.emplace_back("complex_over_cusparse", t[0] / t[1]);
    details.emplace_back("complex_matrix", spec + " (complex double)");
    details.emplace_back("complex_kernel", to_string(op.kernel()));
    details.emplace_back("complex_ms", t[0]);
    details.emplace_back("cusparse_complex_ms", t[1]);
    details.emplace_back("complex_rel_error", err);
    ok = ok && err <= tol;
    std::cerr << spec << " complex double: " << to_string(op.kernel()) << " " << t[0]
              << " ms, cusparse " << t[1] << " ms, error " << err << "\n";
  }

#if defined(KSPMV_HAVE_KOKKOSKERNELS) && defined(KOKKOS_ENABLE_CUDA)
  {  // kspmv::spmv against KokkosSparse::spmv: the same call, matrix, vectors and instance
    using Matrix = KokkosSparse::CrsMatrix<double, int, Kokkos::Cuda, void, int>;
    using Vector = Kokkos::View<double*, Kokkos::CudaSpace>;
    using KKHandle = KokkosSparse::SPMVHandle<Kokkos::Cuda, Matrix, Vector, Vector>;
    const Kokkos::Cuda& exec = q.exec;
    double log_default = 0, log_native = 0;
    const std::vector<Source> sources = benchmark_sources(args.matrices, args.csr_gens, 40000);
    for (const Source& source : sources) {
      const std::string& spec = source.name;
      const auto a = load_matrix<double>(source.source);
      Matrix::row_map_type::non_const_type row_map("row_map", a.nrows + 1);
      Matrix::index_type::non_const_type entries("entries", a.nnz());
      Matrix::values_type::non_const_type values("values", a.nnz());
      const auto r = Kokkos::create_mirror_view(row_map);
      for (Ordinal i = 0; i <= a.nrows; ++i) r(i) = static_cast<int>(a.row_ptr(i));
      Kokkos::deep_copy(row_map, r);
      Kokkos::deep_copy(entries, a.col_idx);
      Kokkos::deep_copy(values, a.values);
      const Matrix A("A", a.nrows, a.ncols, static_cast<int>(a.nnz()), values, row_map, entries);
      const Vector x("x", a.ncols), y("y", a.nrows);
      const auto hx = test::random_vector<double>(a.ncols, 9);
      Kokkos::deep_copy(x, Kokkos::View<const double*, Kokkos::HostSpace>(hx.data(), hx.size()));
      std::vector<double> ref(a.nrows);
      reference::spmv(1.0, a, hx.data(), 0.0, ref.data());
      SpmvHandle<double> ours_handle;
      KKHandle default_handle(KokkosSparse::SPMV_DEFAULT), native_handle(KokkosSparse::SPMV_NATIVE);
      const auto ours = [&] { kspmv::spmv(exec, ours_handle, "N", 1.0, A, x, 0.0, y); };
      const auto kk_default = [&] {
        KokkosSparse::spmv(exec, &default_handle, "N", 1.0, A, x, 0.0, y);
      };
      const auto kk_native = [&] {
        KokkosSparse::spmv(exec, &native_handle, "N", 1.0, A, x, 0.0, y);
      };
      const auto error_of = [&](const Body& run) {
        KSPMV_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xff, a.nrows * sizeof(double), s));
        run();
        exec.fence();
        std::vector<double> hy(a.nrows);
        Kokkos::deep_copy(Kokkos::View<double*, Kokkos::HostSpace>(hy.data(), hy.size()), y);
        return reference::rel_l2_error(hy.data(), ref.data(), ref.size());
      };
      const double err = std::max({error_of(ours), error_of(kk_default), error_of(kk_native)});
      // In pairs, so that SPMV_NATIVE's calls (83 ms on FullChip-like: a thread a row) are not
      // in the rounds of the comparison with the default.
      const auto t_default = time_interleaved_ms({ours, kk_default}, s, args.reps);
      const auto t_native = time_interleaved_ms({ours, kk_native}, s, args.reps);
      const auto enqueue_us = [&](const Body& run) {  // host time of one call, back to back
        exec.fence();
        const auto t0 = Clock::now();
        for (int i = 0; i < 20; ++i) run();
        const double us = 1e3 * ms_since(t0) / 20;
        exec.fence();
        return us;
      };
      const double ours_us = enqueue_us(ours), theirs_us = enqueue_us(kk_default);
      details.emplace_back("kspmv_enqueue_us " + spec, ours_us);
      details.emplace_back("kokkossparse_enqueue_us " + spec, theirs_us);
      const double over_default = t_default[0] / t_default[1];
      const double over_native = t_native[0] / t_native[1];
      log_default += std::log(over_default);
      log_native += std::log(over_native);
      details.emplace_back("kspmv_over_kokkossparse " + spec, over_default);
      details.emplace_back("kspmv_over_kokkossparse_native " + spec, over_native);
      ok = ok && err <= tol;
      std::cerr << spec << ": kspmv::spmv " << t_default[0] << " ms ("
                << to_string(ours_handle.plan()->kernel()) << "), KokkosSparse::spmv "
                << t_default[1] << " ms, native " << t_native[1] << " ms, error " << err
                << "; host per call " << ours_us << " us against " << theirs_us << " us\n";
    }
    const auto count = static_cast<double>(sources.size());
    interop.emplace_back("kspmv_over_kokkossparse", std::exp(log_default / count));
    interop.emplace_back("kspmv_over_kokkossparse_native", std::exp(log_native / count));
  }
#else
  interop.emplace_back("kspmv_over_kokkossparse", Value(nullptr));
  interop.emplace_back("kspmv_over_kokkossparse_native", Value(nullptr));
#endif

  if (runs_on_device(Backend::KokkosDefault)) {  // the portable CSR kernel against cuSPARSE
    double log_sum = 0;
    for (const std::string& spec : args.csr_gens) {
      const auto a = load_matrix<double>("gen:" + spec);
      const CsrPointers<double> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                                  a.ncols};
      const auto d =
          std::make_shared<const cuda::DeviceCsr<double>>(cuda::DeviceCsr<double>::upload(p));
      const auto kokkos = make_bench_spmv<double>({Backend::KokkosDefault, Kernel::Csr}, d, a);
      const auto cusparse = make_bench_spmv<double>({Backend::Cuda, Kernel::Cusparse}, d, a);
      cuda::DeviceBuffer<double> dx(a.ncols), dy(a.nrows);
      const auto x = test::random_vector<double>(a.ncols, 5);
      dx.upload(x.data());
      std::vector<double> ref(a.nrows);
      reference::spmv(1.0, a, x.data(), 0.0, ref.data());
      const double err = std::max(poisoned_error(*kokkos, dx, dy, ref, s),
                                  poisoned_error(*cusparse, dx, dy, ref, s));
      const auto t =
          time_interleaved_ms({[&] { kokkos->run(1.0, dx.data(), 0.0, dy.data(), s); },
                               [&] { cusparse->run(1.0, dx.data(), 0.0, dy.data(), s); }},
                              s, args.reps);
      log_sum += std::log(t[1] / t[0]);
      details.emplace_back("kokkos_csr_vs_cusparse " + spec, t[1] / t[0]);
      ok = ok && err <= tol;
      std::cerr << spec << ": kokkos-csr " << t[0] << " ms, cusparse " << t[1] << " ms, error "
                << err << "\n";
    }
    interop.emplace_back("kokkos_csr_geomean_vs_cusparse",
                         std::exp(log_sum / static_cast<double>(args.csr_gens.size())));
  } else {
    interop.emplace_back("kokkos_csr_geomean_vs_cusparse", Value(nullptr));
  }

  interop.emplace_back("kokkos_cuda_tests_passed",
                       args.tests_json.empty()
                           ? Value(nullptr)
                           : json_number(args.tests_json, "kokkos_cuda_tests_passed"));
  interop.emplace_back("kokkos_cuda_tests_total",
                       args.tests_json.empty()
                           ? Value(nullptr)
                           : json_number(args.tests_json, "kokkos_cuda_tests_total"));
#ifdef KOKKOS_ENABLE_CUDA
  details.emplace_back("vectors", "Kokkos::View in CudaSpace on a Kokkos::Cuda instance");
#else
  details.emplace_back("vectors", "device pointers on a cudaStream_t (Kokkos without CUDA)");
#endif
  fs::create_directories(args.out);
  std::ofstream f(fs::path(args.out) / "interop_bench.json");
  JsonWriter j(f);
  begin_output(j).field("device", device_name(args.device)).field("date", utc_date());
  j.field("interop", interop).field("details", details).field("ok", ok).end_object();
  std::cerr << (ok ? "all results match the reference\n" : "SOME RESULTS FAILED\n");
  return ok ? 0 : 1;
}

Command command() {
  Command c;
  c.name = "interop_bench";
  c.program = "";
  c.description =
      "What an application pays for kspmv::Operator on device vectors against the bare kernel,\n"
      "k = 4 vectors against 4 applies, CUDA-graph replay, update_values against an upload, two\n"
      "operators on two instances at once against back to back, the Kokkos CSR kernel on the\n"
      "GPU against cuSPARSE (with a CUDA Kokkos), complex double against cuSPARSE's complex SpMV,\n"
      "and kspmv::spmv against KokkosSparse::spmv (with Kokkos Kernels and a CUDA Kokkos).\n"
      "Writes interop_bench.json into --out.";
  c.options = {
      {"apply-n", "N", "laplace2d N^2 of the apply, graph and refresh figures (default 2048)"},
      {"spmm-n", "N", "laplace2d N^2 of the 4-vector figure (default 4096)"},
      {"reps", "N", "event-timed rounds (default 50)"},
      {"overlap-gen", "SPEC",
       "the two matrices (seeds 1 and 2) of the two-instance figure (default "
       "uniform:rows=500,k=4000,cols=200000)"},
      {"tests-json", "FILE", "kokkos_cuda.json of the GPU suite's kokkos-cuda step"},
      {"csr-gen", "SPEC",
       "a matrix of the kokkos-csr against cuSPARSE and the KokkosSparse figures (repeatable; "
       "default seven families of 1-40 million non-zeros)"},
      {"matrices", "DIR",
       "also every .mtx / .mtx.gz in DIR with >= 40000 non-zeros in the KokkosSparse figures"},
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

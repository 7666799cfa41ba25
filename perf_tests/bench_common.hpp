// What the GPU benchmark drivers (spmv_bench, hbp_bench, multi_gpu_bench, cg_bench) share beyond
// the tools library: event-timed medians, the check of a kernel, the device name and list, common
// options, the benchmark set (Matrix Market files of a directory and generator specs) and its run
// loop, the peer copy bandwidth of two GPUs. Header-only: each driver is one executable.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/device_spmv.hpp"
#include "backends/cuda/memory.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/timer.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/csv.hpp"
#include "tools/json.hpp"

namespace kspmv::bench {

// The drivers are written with the tools library (arguments, loading, output) in plain sight.
using namespace tools;  // NOLINT(google-build-using-namespace)

// A body faster than kBatchBelowMs is timed as a batch of calls back to back, enough for about
// kBatchMs (at most kMaxBatch), and its time divided by their number: a launch-bound apply then
// counts what a loop of applies gets (the host's enqueueing overlapped with the device), not one
// launch's jitter (the same kernel as two rows of one run differed by up to 7%, H100, 2026-11-25).
inline constexpr double kBatchBelowMs = 0.05, kBatchMs = 0.25;
inline constexpr int kMaxBatch = 64;

// Median milliseconds of one call of each body, event-timed on `stream`, over `reps` interleaved
// rounds after 3 warm-up rounds (tools::interleaved_median_ms), fast bodies in batches. Each
// timed call (or batch) follows an untimed call of the same body, as in a loop of applies: what
// the body before it left in the L2 cache does not count (timed right after HBP, 2.3 ms of its own
// arrays through the L2, cuSPARSE on FullChip-like 3e6 took 0.189 ms, right after itself 0.179,
// on an H200).
inline std::vector<double> time_interleaved_ms(const std::vector<Body>& bodies, cudaStream_t stream,
                                               int reps) {
  cuda::Event start, stop;
  std::vector<int> calls(bodies.size(), 1);
  std::vector<Body> batches;
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    batches.push_back([&, &body = bodies[b], &n = calls[b]] {
      body();
      start.record(stream);
      for (int i = 0; i < n; ++i) body();
      stop.record(stream);
    });
  }
  const auto timed = [&](const Body& batch) -> double {
    batch();
    stop.synchronize();
    return stop.elapsed_since(start);
  };
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    const double ms = timed(batches[b]);
    if (ms < kBatchBelowMs)
      calls[b] = std::min(kMaxBatch, static_cast<int>(std::ceil(kBatchMs / std::max(ms, 1e-3))));
  }
  std::vector<double> ms = interleaved_median_ms(batches, reps, 3, timed);
  for (std::size_t b = 0; b < ms.size(); ++b) ms[b] /= calls[b];
  return ms;
}

// Median milliseconds of `reps` event-timed calls of `body` on `stream` after 3 warm-up calls.
inline double time_ms(const Body& body, cudaStream_t stream, int reps) {
  return time_interleaved_ms({body}, stream, reps)[0];
}

// Device-to-device copy bandwidth of the current device (bytes read + written per second, GB/s)
// of a 1 GiB buffer.
inline double copy_gbps(int reps) {
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

// The relative l2 error against `ref` of y = A x run by `spmv` on `stream` into `y`, poisoned
// with NaN before (a row left unwritten cannot pass).
template <class S>
double poisoned_error(cuda::DeviceSpmv<S>& spmv, const cuda::DeviceBuffer<S>& x,
                      cuda::DeviceBuffer<S>& y, const std::vector<S>& ref, cudaStream_t stream) {
  KSPMV_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xff, y.bytes(), stream));
  spmv.run(S(1), x.data(), S(0), y.data(), stream);
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<S> result(ref.size());
  y.download(result.data());
  return reference::rel_l2_error(result.data(), ref.data(), result.size());
}

// Every part of `v` set to NaN (all bits set); returns once that is done. An Operator's apply on
// its vectors runs on the operator's streams, which do not wait for work queued on the legacy
// default stream: a poison left queued there can land after the apply it was meant to precede
// (kmer:rows=60000000 under AllGather: its 480 MB of y were still being poisoned when the
// kernels began writing them).
template <class S>
void poison(const DistributedVector<S>& v) {
  for (int d = 0; d < v.parts(); ++d) {
    cuda::DeviceGuard guard(v.part(d).device);
    KSPMV_CUDA_CHECK(cudaMemset(v.data(d), 0xff, v.part(d).size * sizeof(S)));
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
}

// y = A x through an Operator's vectors with every part of y poisoned first: the relative l2
// error against the reference.
template <class S>
double operator_error(Operator<S>& op, const DistributedVector<S>& x, const DistributedVector<S>& y,
                      const std::vector<S>& ref) {
  op.synchronize();  // the operator's work on y has ended
  poison(y);
  op.apply(S(1), x, S(0), y);
  std::vector<S> got(ref.size());
  op.download(y, ref.size(), got.data());
  return reference::rel_l2_error(got.data(), ref.data(), got.size());
}

// Medians of `reps` applies y = A x on an Operator's vectors (Operator::make_vector) after 3
// warm-ups, from the operator's events: the slowest device's total, kernels and exchange (one
// device: its kernel); and from the host clock, the time the call to apply took (its enqueueing).
struct ApplyTimes {
  double ms, kernel_ms, exchange_ms, host_ms;
};
template <class S>
ApplyTimes apply_times(Operator<S>& op, const DistributedVector<S>& x,
                       const DistributedVector<S>& y, int reps) {
  std::vector<double> total, kern, exch, host;
  for (int i = 0; i < reps + 3; ++i) {
    const auto t0 = Clock::now();
    op.apply(S(1), x, S(0), y);
    if (i >= 3) host.push_back(ms_since(t0));
    const Timings t = op.timings();  // waits for the apply
    if (i < 3) continue;
    if (t.devices.empty()) {
      total.push_back(t.kernel_ms), kern.push_back(t.kernel_ms), exch.push_back(0);
      continue;
    }
    double a = 0, k = 0, e = 0;
    for (const auto& d : t.devices)
      a = std::max(a, d.total_ms), k = std::max(k, d.kernel_ms), e = std::max(e, d.exchange_ms);
    total.push_back(a), kern.push_back(k), exch.push_back(e);
  }
  return {median(total), median(kern), median(exch), median(host)};
}

// Milliseconds per apply y = A x on an Operator's vectors over a burst of `reps` applies
// enqueued back to back (after 3 warm-ups), from the host clock once the operator has finished:
// no timing events between them.
template <class S>
double burst_ms(Operator<S>& op, const DistributedVector<S>& x, const DistributedVector<S>& y,
                int reps) {
  for (int i = 0; i < 3; ++i) op.apply(S(1), x, S(0), y);
  op.synchronize();
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) op.apply(S(1), x, S(0), y);
  op.synchronize();
  return ms_since(t0) / reps;
}

// A kernel the GPU benchmarks run: a CUDA kernel, or a kernel of a backend that runs on the GPU
// through Kokkos (kokkos-default with a CUDA Kokkos), named "kokkos-csr" and so on.
struct BenchKernel {
  Backend backend = Backend::Cuda;
  Kernel kernel = Kernel::Auto;
};

inline std::string to_string(const BenchKernel& k) {
  return (k.backend == Backend::Cuda ? "" : "kokkos-") + std::string(kspmv::to_string(k.kernel));
}

// "csr-vector", "kokkos-csr", ...: UsageError for a name no GPU backend of this build runs.
inline BenchKernel parse_bench_kernel(const std::string& name) {
  const std::string prefix = "kokkos-";
  const bool kokkos = name.compare(0, prefix.size(), prefix) == 0;
  const BenchKernel k{kokkos ? Backend::KokkosDefault : Backend::Cuda,
                      parse_kernel(kokkos ? name.substr(prefix.size()) : name)};
  if (!runs_on_device(k.backend) || !supports(k.backend, k.kernel))
    throw UsageError("kernel '" + name + "' does not run on the GPU in this build");
  return k;
}

// The registry's rows of the backends that run on the GPU besides CUDA (kokkos-default with a
// CUDA Kokkos; none otherwise).
inline std::vector<BenchKernel> kokkos_gpu_kernels() {
  std::vector<BenchKernel> kernels;
  if (runs_on_device(Backend::KokkosDefault))
    for (const KernelInfo& row : kernels_of(Backend::KokkosDefault))
      kernels.push_back({row.backend, row.kernel});
  return kernels;
}

// A kernel of another GPU backend driven as the CUDA kernels are: kspmv::Operator's apply on
// device pointers, enqueued on the stream.
template <class S>
class OperatorSpmv final : public cuda::DeviceSpmv<S> {
 public:
  OperatorSpmv(const CsrMatrix<S>& a, const BenchKernel& k)
      : op_(a, options(k)), nnz_(static_cast<std::size_t>(a.nnz())) {}
  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    op_.apply(stream, alpha, x, beta, y);
  }
  void update_values(const S* values, cudaStream_t stream) override {
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    op_.update_values(values, nnz_, true);
  }
  Kernel kernel() const override { return op_.kernel(); }

 private:
  static Options options(const BenchKernel& k) {
    Options o;
    o.backend = k.backend;
    o.kernel = k.kernel;
    o.validate = false;  // the benchmarks' matrices are checked when loaded
    return o;
  }
  Operator<S> op_;
  std::size_t nnz_;
};

// `k` bound to `a` on the current device: CUDA kernels on the uploaded `d`, the others through
// their Operator (which keeps a copy of its own in device memory).
template <class S>
std::unique_ptr<cuda::DeviceSpmv<S>> make_bench_spmv(const BenchKernel& k,
                                                     std::shared_ptr<const cuda::DeviceCsr<S>> d,
                                                     const CsrMatrix<S>& a) {
  if (k.backend != Backend::Cuda) return std::make_unique<OperatorSpmv<S>>(a, k);
  const CsrPointers<S> host{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  return cuda::make_device_spmv(k.kernel, std::move(d), host);
}

// The name of CUDA device `device`: the "device" of every JSON output.
inline std::string device_name(int device) {
  cudaDeviceProp prop{};
  KSPMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

// "--devices" of a driver: all (every CUDA device) or a list such as 0,1.
inline std::vector<int> cuda_devices(const std::string& list) {
  std::vector<int> devices = parse_devices(list);
  const int count = cuda::device_count();
  if (devices == std::vector<int>{kAllDevices}) {
    devices.clear();
    for (int d = 0; d < count; ++d) devices.push_back(d);
  }
  if (devices.empty()) throw InvalidArgument("no CUDA device (--devices " + list + ")");
  for (int d : devices)
    if (d >= count)
      throw InvalidArgument("no CUDA device " + std::to_string(d) + " (" + std::to_string(count) +
                            " present)");
  return devices;
}

// Options of several drivers.
inline const OptionSpec kMatricesOption = {"matrices", "DIR",
                                           "every .mtx / .mtx.gz in DIR with >= 40000 non-zeros"};
inline const OptionSpec kDeviceOption = {"device", "D", "CUDA device (default 0)"};
inline const OptionSpec kOutOption = {"out", "DIR", "output directory (default .)"};

// A matrix of the benchmark set: its name (the generator spec, or the file name less
// .mtx[.gz]) and what tools::load_matrix reads ("gen:SPEC" or the file).
struct Source {
  std::string name, source;
  Offset entries = 0;  // stored entries of a file
};

inline std::vector<Source> generated(const std::vector<std::string>& specs) {
  std::vector<Source> sources;
  for (const auto& spec : specs) sources.push_back({spec, "gen:" + spec});
  return sources;
}

// The coordinate Matrix Market files (.mtx, .mtx.gz) of `dir` that kspmv reads, sorted by name,
// symmetric ones only when asked; unreadable ones (complex, array) are skipped with a note.
inline std::vector<Source> matrix_files(const std::string& dir, bool symmetric_only) {
  namespace fs = std::filesystem;
  std::vector<Source> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    const auto ends = [&](const std::string& s) {
      return f.size() > s.size() && f.compare(f.size() - s.size(), s.size(), s) == 0;
    };
    if (!e.is_regular_file() || !(ends(".mtx") || ends(".mtx.gz"))) continue;
    try {
      const auto info = io::read_matrix_market_info(e.path().string());
      if (!symmetric_only || info.symmetry == "symmetric")
        files.push_back({f.substr(0, f.find(".mtx")), e.path().string(), info.entries});
    } catch (const Error& err) {
      std::cerr << "skipping " << f << ": " << err.what() << "\n";
    }
  }
  std::sort(files.begin(), files.end(),
            [](const Source& a, const Source& b) { return a.source < b.source; });
  return files;
}

// spmv_bench, hbp_bench: the files of `dir` (when given) with at least `min_entries` stored
// entries, then the generator specs.
inline std::vector<Source> benchmark_sources(const std::string& dir,
                                             const std::vector<std::string>& gens,
                                             Offset min_entries) {
  std::vector<Source> sources;
  if (!dir.empty())
    for (const Source& f : matrix_files(dir, false))
      if (f.entries >= min_entries) sources.push_back(f);
  for (const Source& g : generated(gens)) sources.push_back(g);
  return sources;
}

// multi_gpu_bench, cg_bench: the generator specs, then the `count` files of `dir` (when given)
// with the most stored entries, largest first.
inline std::vector<Source> generated_then_largest(const std::vector<std::string>& gens,
                                                  const std::string& dir, int count,
                                                  bool symmetric_only) {
  std::vector<Source> sources = generated(gens);
  if (dir.empty()) return sources;
  std::vector<Source> files = matrix_files(dir, symmetric_only);
  std::stable_sort(files.begin(), files.end(),
                   [](const Source& a, const Source& b) { return a.entries > b.entries; });
  files.resize(std::min(files.size(), static_cast<std::size_t>(count)));
  sources.insert(sources.end(), files.begin(), files.end());
  return sources;
}

// Runs bench(name, precision, a) on the matrix of every source, loaded in each precision as
// CsrMatrix<float> or <double> (announced "[i/n] NAME (PRECISION): loading ..."), and calls
// save() after each source and once more at the end (a cut-short run keeps its results). No
// source is started after `time_limit_s` seconds since `t0`. An Error (loading included) is
// reported and handed to failed(name, precision, message).
template <class Bench, class Failed, class Save>
void run_sources(const std::vector<Source>& sources, const std::vector<std::string>& precisions,
                 Clock::time_point t0, double time_limit_s, Bench bench, Failed failed, Save save) {
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const Source& s = sources[i];
    if (ms_since(t0) > 1e3 * time_limit_s) {
      std::cerr << "time limit reached: skipping " << sources.size() - i << " matrices\n";
      break;
    }
    for (const std::string& precision : precisions) {
      std::cerr << "[" << i + 1 << "/" << sources.size() << "] " << s.name << " (" << precision
                << "): loading ... " << std::flush;
      const auto run = [&](auto scalar) {
        using S = decltype(scalar);
        const auto t = Clock::now();
        const CsrMatrix<S> a = load_matrix<S>(s.source, false);
        std::cerr << a.nrows << " x " << a.ncols << ", " << a.nnz() << " nnz in "
                  << fmt(ms_since(t) / 1e3) << " s\n";
        bench(s.name, precision, a);
      };
      try {
        precision == "float" ? run(float{}) : run(double{});
      } catch (const Error& e) {
        std::cerr << "ERROR " << s.name << " (" << precision << "): " << e.what() << "\n";
        failed(s.name, precision, e.what());
      }
    }
    save();
  }
  save();
}

// Peer copy bandwidth between two distinct devices (GB/s): 256 MB one way each direction, and
// both directions at once (sum of both). Peer access is enabled as the executor enables it.
struct PeerBandwidth {
  double to_1 = NAN, to_0 = NAN, both = NAN;
};

inline PeerBandwidth peer_bandwidth(int d0, int d1, int reps) {
  for (const auto& [p, q] : {std::pair<int, int>{d0, d1}, std::pair<int, int>{d1, d0}}) {
    int can = 0;
    KSPMV_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, p, q));
    cuda::DeviceGuard g(p);
    if (can && cudaDeviceEnablePeerAccess(q, 0) != cudaSuccess) cudaGetLastError();
  }
  const std::size_t bytes = std::size_t{256} << 20;
  std::unique_ptr<cuda::DeviceBuffer<char>> a0, b0, a1, b1;
  std::unique_ptr<cuda::Stream> s0, s1;
  std::unique_ptr<cuda::Event> start, stop, done1;
  {
    cuda::DeviceGuard g(d1);
    a1 = std::make_unique<cuda::DeviceBuffer<char>>(bytes);
    b1 = std::make_unique<cuda::DeviceBuffer<char>>(bytes);
    s1 = std::make_unique<cuda::Stream>();
    done1 = std::make_unique<cuda::Event>(false);
  }
  cuda::DeviceGuard g(d0);
  a0 = std::make_unique<cuda::DeviceBuffer<char>>(bytes);
  b0 = std::make_unique<cuda::DeviceBuffer<char>>(bytes);
  s0 = std::make_unique<cuda::Stream>();
  start = std::make_unique<cuda::Event>();
  stop = std::make_unique<cuda::Event>();
  const auto timed = [&](const std::function<void()>& body) {
    std::vector<double> ms;
    for (int i = 0; i < reps + 2; ++i) {
      start->record(s0->get());
      body();
      stop->record(s0->get());
      stop->synchronize();
      if (i >= 2) ms.push_back(stop->elapsed_since(*start));
    }
    return median(ms);
  };
  PeerBandwidth bw;
  const auto copy = [&](char* dst, int dd, const char* src, int sd, cudaStream_t s) {
    KSPMV_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dd, src, sd, bytes, s));
  };
  bw.to_1 = bytes / (timed([&] { copy(a1->data(), d1, a0->data(), d0, s0->get()); }) * 1e6);
  bw.to_0 = bytes / (timed([&] { copy(b0->data(), d0, b1->data(), d1, s0->get()); }) * 1e6);
  bw.both = 2.0 * bytes /
            (timed([&] {
               KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s1->get(), start->get(), 0));
               copy(a1->data(), d1, a0->data(), d0, s0->get());
               copy(b0->data(), d0, b1->data(), d1, s1->get());
               {
                 cuda::DeviceGuard g1(d1);
                 done1->record(s1->get());
               }
               KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s0->get(), done1->get(), 0));
             }) *
             1e6);
  {
    cuda::DeviceGuard g1(d1);
    a1.reset(), b1.reset(), s1.reset(), done1.reset();
  }
  return bw;
}

// The first device of `devices` and the first one that differs from it (-1 when none does).
inline std::pair<int, int> first_pair(const std::vector<int>& devices) {
  const auto other =
      std::find_if(devices.begin(), devices.end(), [&](int d) { return d != devices.front(); });
  return {devices.front(), other == devices.end() ? -1 : *other};
}

}  // namespace kspmv::bench

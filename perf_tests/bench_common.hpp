// What the GPU benchmark drivers (spmv_bench, hbp_bench, multi_gpu_bench, cg_bench) share:
// argument reading, main(), the benchmark set (Matrix Market files of a directory and generator
// specs), wall-clock and event-timed medians, number, CSV and JSON formatting, the peer copy
// bandwidth of two GPUs. Header-only: each driver is one executable.
#pragma once

#include <cuda_runtime_api.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/timer.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "tools/args.hpp"

namespace kspmv::bench {

using tools::split;

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Median milliseconds of each body over `reps` rounds that time every body once, in turn,
// after 3 warm-up rounds: bodies compared this way see the same drift of clocks and of the
// host-to-device bandwidth (which moved by several percent between back-to-back medians).
inline std::vector<double> time_interleaved_ms(const std::vector<std::function<void()>>& bodies,
                                               cudaStream_t stream, int reps) {
  for (int i = 0; i < 3; ++i)
    for (const auto& body : bodies) body();
  cuda::Event start, stop;
  std::vector<std::vector<double>> ms(bodies.size());
  for (int i = 0; i < reps; ++i) {
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      start.record(stream);
      bodies[b]();
      stop.record(stream);
      stop.synchronize();
      ms[b].push_back(stop.elapsed_since(start));
    }
  }
  std::vector<double> medians;
  for (auto& m : ms) medians.push_back(median(m));
  return medians;
}

// Median milliseconds of `reps` event-timed calls of `body` on `stream` after 3 warm-up calls.
inline double time_ms(const std::function<void()>& body, cudaStream_t stream, int reps) {
  return time_interleaved_ms({body}, stream, reps)[0];
}

inline std::string fmt(double v) {
  if (!std::isfinite(v)) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
inline std::string json_num(double v) {
  return std::isfinite(v) ? fmt(v) : "null";
}
inline std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += (c == '\n') ? ' ' : c;
  }
  return o + "\"";
}
// A CSV field: quoted when it holds a comma or a quote (generator specs hold commas).
inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}
// A CSV cell: commas and line breaks would split it.
inline std::string csv_cell(std::string s) {
  std::replace(s.begin(), s.end(), ',', ';');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// The name of CUDA device `device` and the current UTC time (ISO 8601): the "device" and "date"
// of every JSON output.
inline std::string device_name(int device) {
  cudaDeviceProp prop{};
  KSPMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}
inline std::string utc_date() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

// A driver's command line, one argument at a time: next() steps to the next argument (flag()),
// value() takes the one after it; unknown() answers --help / -h with the usage on stdout and
// exit 0, anything else with an error that shows the usage.
class Arguments {
 public:
  Arguments(int argc, char** argv, const char* usage) : argc_(argc), argv_(argv), usage_(usage) {}
  bool next() {
    if (++i_ >= argc_) return false;
    flag_ = argv_[i_];
    return true;
  }
  const std::string& flag() const { return flag_; }
  std::string value() {
    if (i_ + 1 >= argc_) throw InvalidArgument(flag_ + " needs a value");
    return argv_[++i_];
  }
  [[noreturn]] void unknown() const {
    if (flag_ == "--help" || flag_ == "-h") {
      std::cout << usage_;
      std::exit(0);
    }
    throw InvalidArgument("unknown argument '" + flag_ + "'\n" + usage_);
  }

 private:
  int argc_, i_ = 0;
  char** argv_;
  const char* usage_;
  std::string flag_;
};

// "--precision float|double|both": the precisions to run.
inline std::vector<std::string> parse_precisions(const std::string& p) {
  if (p != "float" && p != "double" && p != "both")
    throw InvalidArgument("--precision must be float, double or both");
  return p == "both" ? std::vector<std::string>{"float", "double"} : std::vector<std::string>{p};
}
// "--precision float|double".
inline std::string parse_precision(const std::string& p) {
  if (p != "float" && p != "double") throw InvalidArgument("--precision must be float or double");
  return p;
}

// The default generated set of spmv_bench and multi_gpu_bench: every family, large (small ones
// when `quick`).
inline std::vector<std::string> family_specs(bool quick) {
  return quick ? std::vector<std::string>{"laplace2d:n=512",
                                          "stencil27:n=40",
                                          "uniform:rows=200000,k=8",
                                          "kron:scale=16",
                                          "rgg:scale=16",
                                          "kmer:rows=500000",
                                          "fullchip:rows=100000"}
               : std::vector<std::string>{
                     "laplace2d:n=4096",     "stencil27:n=160", "uniform:rows=20000000,k=8",
                     "kron:scale=21",        "rgg:scale=23",    "kmer:rows=60000000",
                     "fullchip:rows=3000000"};
}

// "--devices" of a driver: "all" (or nothing) is every CUDA device, else a list such as 0,1.
inline std::vector<int> parse_device_list(const std::string& list, int count) {
  std::vector<int> devices;
  if (list.empty() || list == "all") {
    for (int d = 0; d < count; ++d) devices.push_back(d);
  } else {
    for (const auto& d : split(list, ',')) {
      std::size_t used = 0;
      int id = -1;
      try {
        id = std::stoi(d, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != d.size()) throw InvalidArgument("--devices: '" + d + "' is not a device id");
      devices.push_back(id);
    }
  }
  if (devices.empty()) throw InvalidArgument("no CUDA device (--devices " + list + ")");
  for (int d : devices)
    if (d < 0 || d >= count)
      throw InvalidArgument("no CUDA device " + std::to_string(d) + " (" + std::to_string(count) +
                            " present)");
  return devices;
}

// The `count` coordinate Matrix Market files (.mtx, .mtx.gz) of `dir` with the most stored
// entries (symmetric ones only when asked), largest first; unreadable banners are skipped.
inline std::vector<std::pair<std::string, std::string>> largest_matrix_files(const std::string& dir,
                                                                             int count,
                                                                             bool symmetric_only) {
  namespace fs = std::filesystem;
  std::vector<std::pair<Offset, fs::path>> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    const auto ends = [&](const std::string& s) {
      return f.size() > s.size() && f.compare(f.size() - s.size(), s.size(), s) == 0;
    };
    if (!e.is_regular_file() || !(ends(".mtx") || ends(".mtx.gz"))) continue;
    try {
      const auto info = io::read_matrix_market_info(e.path().string());
      if (info.field == "complex" || (symmetric_only && info.symmetry != "symmetric")) continue;
      found.emplace_back(info.entries, e.path());
    } catch (const Error& err) {
      std::cerr << "skipping " << f << ": " << err.what() << "\n";
    }
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  if (static_cast<int>(found.size()) > count) found.resize(count);
  std::vector<std::pair<std::string, std::string>> out;  // (name, path)
  for (const auto& [entries, p] : found) {
    std::string stem = p.filename().string();
    out.emplace_back(stem.substr(0, stem.find(".mtx")), p.string());
  }
  return out;
}

// The generator specs (empty path), then the `count` largest Matrix Market files of `dir` (when
// given), as largest_matrix_files picks them.
inline std::vector<std::pair<std::string, std::string>> generated_then_largest(
    const std::vector<std::string>& gens, const std::string& dir, int count, bool symmetric_only) {
  std::vector<std::pair<std::string, std::string>> sources;  // (name, path; empty: generated)
  for (const auto& g : gens) sources.emplace_back(g, "");
  if (!dir.empty())
    for (const auto& f : largest_matrix_files(dir, count, symmetric_only)) sources.push_back(f);
  return sources;
}

// The benchmark set as (name, path) pairs: every .mtx / .mtx.gz of `dir` (when given) with at
// least `min_entries` stored entries, sorted by name (complex and array files skipped with a
// note), then the generator specs (empty path).
inline std::vector<std::pair<std::string, std::string>> benchmark_sources(
    const std::string& dir, const std::vector<std::string>& gens, Offset min_entries) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> sources;
  if (!dir.empty()) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string f = e.path().filename().string();
      const bool mtx = f.size() > 4 && (f.substr(f.size() - 4) == ".mtx" ||
                                        (f.size() > 7 && f.substr(f.size() - 7) == ".mtx.gz"));
      if (e.is_regular_file() && mtx) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      try {
        if (io::read_matrix_market_info(p.string()).entries < min_entries) continue;
      } catch (const ParseError& e) {  // complex or array files: not in the benchmark set
        std::cerr << "skipping " << p.filename().string() << ": " << e.what() << "\n";
        continue;
      }
      std::string stem = p.filename().string();
      stem = stem.substr(0, stem.find(".mtx"));
      sources.emplace_back(stem, p.string());
    }
  }
  for (const auto& g : gens) sources.emplace_back(g, "");
  return sources;
}

// The matrix of a benchmark_sources entry.
template <class S>
CsrMatrix<S> load_source(const std::string& name, const std::string& path) {
  return path.empty() ? gen::from_spec<S>(name) : io::read_matrix_market<S>(path);
}

// load_source told on std::cerr: "NAME (PRECISION): generating|reading ... M x N, NNZ nnz".
template <class S>
CsrMatrix<S> load_source_logged(const std::string& name, const std::string& path,
                                const std::string& precision) {
  std::cerr << name << " (" << precision << "): " << (path.empty() ? "generating" : "reading")
            << " ... " << std::flush;
  CsrMatrix<S> a = load_source<S>(name, path);
  std::cerr << a.nrows << " x " << a.ncols << ", " << a.nnz() << " nnz\n";
  return a;
}

// Runs `bench(name, path)` on each (name, path) of `sources` in order, announced "[i/n] ", and
// calls `save()` after each and once more at the end (a cut-short run keeps its results). No
// source is started after `time_limit_s` seconds since `t0`. A source that throws an Error is
// reported and handed to `failed(name, message)`.
template <class Bench, class Failed, class Save>
void run_sources(const std::vector<std::pair<std::string, std::string>>& sources,
                 Clock::time_point t0, double time_limit_s, Bench bench, Failed failed, Save save) {
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto& [name, path] = sources[i];
    if (ms_since(t0) > 1e3 * time_limit_s) {
      std::cerr << "time limit reached: skipping " << sources.size() - i << " matrices\n";
      break;
    }
    std::cerr << "[" << i + 1 << "/" << sources.size() << "] ";
    try {
      bench(name, path);
    } catch (const Error& e) {
      std::cerr << "ERROR " << name << ": " << e.what() << "\n";
      failed(name, e.what());
    }
    save();
  }
  save();
}

// `n` values uniform in [-1, 1) from a generator seeded with `seed`.
template <class S>
std::vector<S> random_values(std::size_t n, std::uint64_t seed) {
  std::vector<S> v(n);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (auto& e : v) e = static_cast<S>(dist(gen));
  return v;
}

// The bytes an SpMV must move at least (DESIGN.md "Measuring"): values, column indices, row
// pointer, x once and y once.
template <class S>
double bytes_moved(const CsrMatrix<S>& a) {
  return a.nnz() * (sizeof(S) + 4.0) + (a.nrows + 1) * 4.0 +
         (static_cast<double>(a.ncols) + a.nrows) * sizeof(S);
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

// main() of a driver: Kokkos initialized around `run`; an exception is printed after the
// driver's name, with exit status 2.
inline int bench_main(const char* name, int argc, char** argv, int (*run)(int, char**)) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace kspmv::bench

// What the multi-GPU benchmark drivers (multi_gpu_bench, cg_bench) share: statistics, number
// and JSON formatting, the peer copy bandwidth of two GPUs, and picking the largest Matrix
// Market files of a directory. Header-only: each driver is one executable.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/io/matrix_market.hpp"

namespace kspmv::bench {

using Clock = std::chrono::steady_clock;

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
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
// A CSV cell: commas and line breaks would split it.
inline std::string csv_cell(std::string s) {
  std::replace(s.begin(), s.end(), ',', ';');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string p; std::getline(in, p, sep);)
    if (!p.empty()) parts.push_back(p);
  return parts;
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

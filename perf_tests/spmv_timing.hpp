// What the single-GPU SpMV benchmark drivers (spmv_bench, hbp_bench) share: the benchmark set
// (Matrix Market files of a directory and generator specs), event-timed medians, number and
// JSON formatting. Header-only: each driver is one executable.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/memory.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"

namespace kspmv::perf {

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Median milliseconds of `reps` event-timed calls of `body` on `stream` after 3 warm-up calls.
inline double time_ms(const std::function<void()>& body, cudaStream_t stream, int reps) {
  for (int i = 0; i < 3; ++i) body();
  cuda::Event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    start.record(stream);
    body();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(stop.elapsed_since(start));
  }
  return median(ms);
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

}  // namespace kspmv::perf

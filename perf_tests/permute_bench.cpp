// A device vector moved through a random permutation, as Reorder's x gather and y scatter move
// one around each apply in the caller's order: one direct gather and one direct scatter
// (vector_ops.hpp) against cuda::WindowedGather at windows of a half, a quarter, an eighth and a
// sixteenth of the L2 (the gather, and the scatter as the gather through the inverse), each
// checked against the permutation on the host with its output poisoned first, timed in
// interleaved rounds beside a device-to-device copy of the vector. Bytes an entry: the time at
// the copy's rate, over the entries (the copy itself moves 2 * sizeof(double)). Writes
// permute_bench.csv, permute_bench.json and summary.json into --out.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/memory.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "backends/cuda/windowed_gather.hpp"
#include "bench_common.hpp"
#include "kspmv/analysis/locality.hpp"
#include "kspmv/registry.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::bench;

struct Result {
  Ordinal n = 0;
  std::string method;
  Ordinal window = 0;  // entries (0: direct)
  double ms = NAN, bytes_per_entry = NAN;
  bool ok = false;
};

// Whether `out` (downloaded) is in[perm[i]] (gather) or has in[i] at perm[i] (scatter).
bool moved_right(const std::vector<double>& in, const std::vector<double>& out,
                 const std::vector<Ordinal>& perm, bool scatter) {
  for (std::size_t i = 0; i < perm.size(); ++i)
    if ((scatter ? out[perm[i]] : out[i]) != (scatter ? in[i] : in[perm[i]])) return false;
  return true;
}

std::vector<Result> bench(Ordinal n, int reps, std::size_t cache) {
  std::vector<Ordinal> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(7);
  std::shuffle(perm.begin(), perm.end(), rng);
  const std::vector<double> in = random_values<double>(n, 11);
  cuda::DeviceBuffer<Ordinal> d_perm(n);
  cuda::DeviceBuffer<double> d_in(n), d_out(n), d_work(n);
  d_perm.upload(perm.data());
  d_in.upload(in.data());
  cuda::Stream stream;
  const cudaStream_t s = stream.get();

  struct Case {
    Result r;
    Body body;
    bool scatter;
  };
  std::vector<Case> cases;
  const auto add = [&](const std::string& method, Ordinal window, bool scatter, Body body) {
    Result r;
    r.n = n, r.method = method, r.window = window;
    cases.push_back({r, std::move(body), scatter});
  };
  add("gather", 0, false,
      [&] { cuda::gather_entries(d_out.data(), d_in.data(), d_perm.data(), n, s); });
  add("scatter", 0, true,
      [&] { cuda::scatter_entries(d_out.data(), d_in.data(), d_perm.data(), n, s); });
  std::vector<cuda::WindowedGather> plans;
  plans.reserve(5);
  for (const std::size_t share : {2, 4, 8, 16}) {
    const auto window = static_cast<Ordinal>(std::max<std::size_t>(1, cache / share / 8));
    const cuda::WindowedGather* g = &plans.emplace_back(d_perm.data(), n, window, false, s);
    add("windowed gather", window, false,
        [&, g] { g->run(d_in.data(), d_out.data(), d_work.data(), s); });
  }
  const Ordinal eighth = analysis::permute_window(n, sizeof(double), cache);
  if (eighth > 0) {
    const cuda::WindowedGather* g = &plans.emplace_back(d_perm.data(), n, eighth, true, s);
    add("windowed scatter", eighth, true,
        [&, g] { g->run(d_in.data(), d_out.data(), d_work.data(), s); });
  }
  std::vector<double> out(n);
  std::vector<Body> bodies;
  for (Case& c : cases) {
    KSPMV_CUDA_CHECK(cudaMemsetAsync(d_out.data(), 0xff, d_out.bytes(), s));
    c.body();
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(s));
    d_out.download(out.data());
    c.r.ok = moved_right(in, out, perm, c.scatter);
    bodies.push_back(c.body);
  }
  bodies.push_back([&] {
    KSPMV_CUDA_CHECK(
        cudaMemcpyAsync(d_out.data(), d_in.data(), d_in.bytes(), cudaMemcpyDeviceToDevice, s));
  });
  const std::vector<double> ms = time_interleaved_ms(bodies, s, reps);
  const double copy_bytes_per_ms = 2.0 * d_in.bytes() / ms.back();
  std::vector<Result> results;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Result r = cases[i].r;
    r.ms = ms[i];
    r.bytes_per_entry = r.ms * copy_bytes_per_ms / double(n);
    results.push_back(r);
  }
  std::cerr << "  " << n << " doubles: copy " << fmt(ms.back()) << " ms\n";
  return results;
}

int run(const ParsedArgs& in) {
  const int device = static_cast<int>(in.integer("device", 0, 0, 1 << 20));
  const int reps = static_cast<int>(in.integer("reps", 20, 1, 1 << 20));
  const std::string out = in.text("out", ".");
  std::vector<std::string> sizes = in.all("rows");
  if (sizes.empty()) sizes = {"6e7", "2e7"};
  if (cuda::device_count() <= device)
    throw InvalidArgument("no CUDA device " + std::to_string(device));
  KSPMV_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t cache = cuda_l2_cache_bytes(device);
  std::vector<Result> results;
  for (const std::string& size : sizes) {
    const double rows = parse_number(size, "--rows");
    if (!(rows >= 1 && rows < 2147483647.0)) throw UsageError("--rows: 1 to 2^31 - 1 entries");
    for (const Result& r : bench(static_cast<Ordinal>(rows), reps, cache)) results.push_back(r);
  }
  std::printf("%12s %-18s %10s %10s %14s\n", "entries", "method", "window", "ms", "bytes/entry");
  std::vector<Record> rows;
  for (const Result& r : results) {
    std::printf("%12d %-18s %10d %10.4f %14.1f%s\n", r.n, r.method.c_str(), r.window, r.ms,
                r.bytes_per_entry, r.ok ? "" : "  WRONG");
    rows.push_back({{"entries", r.n},
                    {"method", r.method},
                    {"window", r.window},
                    {"ms", r.ms},
                    {"bytes_per_entry", r.bytes_per_entry},
                    {"ok", r.ok}});
  }
  const Record header = {
      {"device", device_name(device)}, {"date", utc_date()}, {"l2_bytes", cache}};
  write_results(out, "permute_bench", header, rows, rows,
                {"entries", "method", "window", "ms", "bytes_per_entry", "ok"});
  const bool ok = std::all_of(results.begin(), results.end(), [](const Result& r) { return r.ok; });
  std::cerr << (ok ? "every permutation is right\n" : "SOME PERMUTATIONS ARE WRONG\n");
  return ok ? 0 : 1;
}

Command command() {
  Command c;
  c.name = "permute_bench";
  c.program = "";
  c.description =
      "A device vector of doubles through a random permutation: one direct gather and scatter\n"
      "against the two-pass WindowedGather at several windows (Reorder's vectors in the caller's\n"
      "order), each checked, with the bytes an entry costs at the copy rate. Writes\n"
      "permute_bench.csv, permute_bench.json and summary.json into --out.";
  c.options = {
      {"rows", "N", "entries of the vector (e.g. 6e7); repeatable (default 6e7 and 2e7)"},
      {"reps", "N", "event-timed runs per method (default 20)"},
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

// Matrix Market reading speed: writes a random matrix of about --mb megabytes as .mtx and as
// .mtx.gz into a temporary directory, times read_matrix_market<double> (best of 3) and prints
// MB/s of file read (wall clock and CPU time). Usage: mm_read_bench [--mb N] [--no-gzip] [--json]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kspmv/core/parallel.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kspmv;
using namespace kspmv::tools;

// splitmix64: a small deterministic generator, independent of the standard library's.
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53 * 2.0 - 1.0; }  // [-1, 1)
};

// An n x n matrix with `per_row` sorted distinct random columns per row and random values.
CsrMatrix<double> random_csr(Ordinal n, int per_row) {
  Random rng{42};
  CsrMatrix<double> a(n, n, Offset(n) * per_row);
  std::vector<Ordinal> cols;
  Offset nnz = 0;
  for (Ordinal i = 0; i < n; ++i) {
    cols.clear();
    for (int k = 0; k < per_row; ++k) cols.push_back(Ordinal(rng.next() % std::uint64_t(n)));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (Ordinal c : cols) {
      a.col_idx(nnz) = c;
      a.values(nnz) = rng.uniform();
      ++nnz;
    }
    a.row_ptr(i + 1) = nnz;
  }
  CsrMatrix<double> exact(n, n, nnz);  // drop the room left by duplicate columns
  for (Ordinal i = 0; i <= n; ++i) exact.row_ptr(i) = a.row_ptr(i);
  std::copy(a.col_idx.data(), a.col_idx.data() + nnz, exact.col_idx.data());
  std::copy(a.values.data(), a.values.data() + nnz, exact.values.data());
  return exact;
}

struct Result {
  std::string name;
  double file_mb = 0, text_mb = 0, write_s = 0, read_s = 1e300, read_cpu_s = 1e300;
};

Result measure(const std::string& path, const CsrMatrix<double>& a, double text_mb) {
  Result r;
  r.name = fs::path(path).filename().string();
  r.write_s = seconds_of([&] { io::write_matrix_market(path, a); }).wall;
  r.file_mb = double(fs::file_size(path)) / 1e6;
  r.text_mb = text_mb > 0 ? text_mb : r.file_mb;
  io::ReadOptions quiet;
  quiet.progress = false;
  for (int rep = 0; rep < 3; ++rep) {
    CsrMatrix<double> b;
    const Seconds t = seconds_of([&] { b = io::read_matrix_market<double>(path, quiet); });
    r.read_s = std::min(r.read_s, t.wall);
    r.read_cpu_s = std::min(r.read_cpu_s, t.cpu);
    if (b.nnz() != a.nnz())
      throw std::runtime_error(path + ": read back " + std::to_string(b.nnz()) +
                               " entries, wrote " + std::to_string(a.nnz()));
  }
  return r;
}

// A fresh directory under the system's temporary one, removed with everything in it at the end.
struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("kspmv_mm_read_bench_" +
                   std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

int run(const ParsedArgs& in) {
  const double target_mb = in.number("mb", 100);
  if (!(target_mb > 0)) throw UsageError("--mb must be positive");
  const TempDir dir;
  // An entry line is "row col value\n": two indices of n's digits and a ~19-character value.
  constexpr int kPerRow = 16;
  Ordinal n = 1;
  for (int pass = 0; pass < 3; ++pass) {
    const int digits = int(std::to_string(n).size());
    n = std::max<Ordinal>(1, Ordinal(target_mb * 1e6 / (2 * digits + 22) / kPerRow));
  }
  const CsrMatrix<double> a = random_csr(n, kPerRow);
  const Offset nnz = a.nnz();
  std::vector<Result> results;
  results.push_back(measure((dir.path / "bench.mtx").string(), a, 0));
  if (!in.flag("no-gzip"))
    results.push_back(measure((dir.path / "bench.mtx.gz").string(), a, results[0].file_mb));
  const int threads = host_threads();

  if (in.flag("json")) {
    JsonWriter j(std::cout);
    begin_output(j)
        .field("benchmark", "mm_read")
        .field("nnz", nnz)
        .field("threads", threads)
        .key("files")
        .begin_array();
    for (const Result& r : results)
      j.value(Record{{"file", r.name},
                     {"file_mb", r.file_mb},
                     {"read_s", r.read_s},
                     {"read_mb_per_s", r.file_mb / r.read_s},
                     {"text_mb_per_s", r.text_mb / r.read_s},
                     {"read_cpu_s", r.read_cpu_s},
                     {"cpu_mb_per_s", r.file_mb / r.read_cpu_s},
                     {"write_s", r.write_s}});
    j.end_array().end_object();
  } else {
    std::printf("read_matrix_market<double>, best of 3, %lld entries, %d threads\n", (long long)nnz,
                threads);
    std::printf("%-14s %8s %8s %10s %10s %8s %10s %8s\n", "file", "size MB", "read s", "file MB/s",
                "text MB/s", "cpu s", "cpu MB/s", "write s");
    for (const Result& r : results) {
      std::printf("%-14s %8.1f %8.3f %10.1f %10.1f %8.3f %10.1f %8.3f\n", r.name.c_str(), r.file_mb,
                  r.read_s, r.file_mb / r.read_s, r.text_mb / r.read_s, r.read_cpu_s,
                  r.file_mb / r.read_cpu_s, r.write_s);
    }
  }
  return 0;
}

Command command() {
  Command c;
  c.name = "mm_read_bench";
  c.program = "";
  c.description =
      "Matrix Market reading speed: a random matrix of about --mb megabytes written as .mtx and\n"
      ".mtx.gz into a temporary directory and read back (best of 3), in MB/s, on every core\n"
      "(KSPMV_THREADS sets the thread count).";
  c.options = {
      {"mb", "N", "size of the .mtx file in MB (default 100)"},
      {"no-gzip", "", "the plain file only (writing gzip is slow at several GB)"},
      {"json", "", "one JSON object instead of the table"},
  };
  c.run = run;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}

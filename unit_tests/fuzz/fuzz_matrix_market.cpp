// libFuzzer target for the Matrix Market reader. The input is a file's text, read plain and
// gzip-compressed (an input that is gzip data is read as it is, too), in double and float, and
// for statistics from the pattern alone. Beyond "no memory error, no undefined behaviour":
//  - only kspmv::Error escapes, with a message of one short line of printable characters;
//  - plain and gzip give the same matrix or the same error, and so does float where double
//    succeeds (its values aside);
//  - a matrix read is valid with sorted, unique columns, and the pattern counts agree with it;
//  - memory: the peak of a read is at most kFixedBytes + kBytesPerByte x the text's size, plus
//    the row pointers of a matrix read whole (a declared size it may honour within its budget);
//    the pattern counts get no such allowance.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/io/matrix_market.hpp"

namespace {

using kspmv::fuzz::require;
// The reader's budget: row pointers of up to 512K declared rows. Larger ones were zero-filled
// 64 MiB at a time, three reads an input: most of the time went there (perf, 120 inputs/s).
constexpr std::size_t kBudget = std::size_t(4) << 20;
constexpr std::size_t kFixedBytes = std::size_t(16) << 20;
constexpr std::size_t kBytesPerByte = 32;

// What one read gave: a matrix, or an error message without the file's name.
template <class S>
struct Outcome {
  bool ok = false;
  bool memory_error = false;
  std::string error;
  kspmv::CsrMatrix<S> a;
  kspmv::io::ReadReport report;
};

std::string without_path(const std::string& what, const std::string& path) {
  return what.compare(0, path.size(), path) == 0 ? what.substr(path.size()) : what;
}

// The row pointers of the matrix a file declares, as far as the reader's budget allows them.
std::size_t row_ptr_bytes(const std::string& path) {
  try {
    const auto rows = std::size_t(kspmv::io::read_matrix_market_info(path).nrows);
    return std::min(kBudget, (rows + 1) * sizeof(kspmv::Offset));
  } catch (const kspmv::Error&) {
    return 0;
  }
}

// A read of `path`, whose text has `text_bytes` and row pointers `row_ptr` bytes.
template <class S>
Outcome<S> read(const std::string& path, std::size_t text_bytes, std::size_t row_ptr) {
  Outcome<S> r;
  kspmv::fuzz::PeakMemory peak;
  peak.start();
  try {
    r.a = kspmv::io::read_matrix_market<S>(path, {false}, &r.report);
    r.ok = true;
  } catch (const kspmv::MemoryError& e) {
    r.memory_error = true;
    r.error = without_path(e.what(), path);
  } catch (const kspmv::Error& e) {
    r.error = without_path(e.what(), path);
    kspmv::fuzz::require_printable(r.error);
  } catch (const std::exception& e) {
    require(false, std::string("not a kspmv::Error: ") + e.what());
  }
  require(peak.peak_bytes() <= kFixedBytes + kBytesPerByte * text_bytes + row_ptr,
          "a read of " + std::to_string(text_bytes) + " bytes of text peaked at " +
              std::to_string(peak.peak_bytes()) + " bytes");
  if (r.ok) {
    r.a.validate();
    require(r.a.is_sorted_unique(), "columns not sorted and unique");
  }
  return r;
}

template <class S>
bool same_bits(const kspmv::HostView<S>& x, const kspmv::HostView<S>& y) {
  return x.extent(0) == y.extent(0) &&
         std::memcmp(x.data(), y.data(), x.extent(0) * sizeof(S)) == 0;
}

// The non-zero counts among ptr's, sorted.
std::vector<kspmv::Offset> counts_of(const kspmv::HostView<kspmv::Offset>& ptr) {
  std::vector<kspmv::Offset> c;
  for (std::size_t k = 0; k + 1 < ptr.extent(0); ++k)
    if (ptr(k + 1) > ptr(k)) c.push_back(ptr(k + 1) - ptr(k));
  std::sort(c.begin(), c.end());
  return c;
}

void check_counts(const std::string& path, std::size_t text_bytes, const Outcome<double>& d) {
  kspmv::fuzz::PeakMemory peak;
  peak.start();
  kspmv::io::PatternCounts counts;
  kspmv::io::ReadReport report;
  bool ok = false;
  try {
    counts = kspmv::io::read_matrix_market_counts(path, {false}, report);
    ok = true;
  } catch (const kspmv::MemoryError&) {
    require(!d.ok, "pattern counts ran out of memory where the matrix did not");
  } catch (const kspmv::Error& e) {  // the matrix may have run out of memory before the error
    require(!d.ok && (d.memory_error || without_path(e.what(), path) == d.error),
            "pattern counts fail another way: '" + std::string(e.what()) + "'");
  } catch (const std::exception& e) {
    require(false, std::string("not a kspmv::Error: ") + e.what());
  }
  require(peak.peak_bytes() <= kFixedBytes + kBytesPerByte * text_bytes,
          "pattern counts of " + std::to_string(text_bytes) + " bytes of text peaked at " +
              std::to_string(peak.peak_bytes()) + " bytes");
  require(!ok || d.ok || d.memory_error, "pattern counts read a file the matrix reader refused");
  if (!ok || !d.ok) return;
  require(counts_of(counts.row_ptr) == counts_of(d.a.row_ptr), "row counts differ");
  std::vector<kspmv::Ordinal> cols(d.a.col_idx.data(), d.a.col_idx.data() + d.a.nnz());
  std::sort(cols.begin(), cols.end());
  std::vector<kspmv::Offset> col_counts;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    if (k == 0 || cols[k] != cols[k - 1]) col_counts.push_back(0);
    ++col_counts.back();
  }
  std::sort(col_counts.begin(), col_counts.end());
  require(counts_of(counts.col_ptr) == col_counts, "column counts differ");
  require(report.nonfinite.count == d.report.nonfinite.count &&
              report.both_triangles_line == d.report.both_triangles_line,
          "pattern counts: another report");
}

// The size of gzip data once inflated, at most `cap`.
std::size_t inflated_size(const std::string& path, std::size_t cap) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::vector<char> buf(1 << 16);
  std::size_t total = 0;
  for (int n; f != nullptr && total < cap && (n = gzread(f, buf.data(), unsigned(buf.size()))) > 0;)
    total += std::size_t(n);
  if (f != nullptr) gzclose(f);
  return total;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kspmv::fuzz::initialize(kBudget);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* text = reinterpret_cast<const char*>(data);
  const std::string plain = kspmv::fuzz::scratch_path(".mtx");
  const std::string gzip = kspmv::fuzz::scratch_path(".mtx.gz");
  kspmv::fuzz::write_file(plain, text, size, false);
  kspmv::fuzz::write_file(gzip, text, size, true);

  // An input that is gzip data: its text is the inflated data (a bomb still cannot pass the cap).
  const bool is_gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::size_t text_bytes = is_gzip ? inflated_size(plain, std::size_t(1) << 30) : size;
  const std::size_t row_ptr = row_ptr_bytes(plain);
  const Outcome<double> d = read<double>(plain, text_bytes, row_ptr);
  check_counts(plain, text_bytes, d);
  if (!is_gzip) {
    const Outcome<double> z = read<double>(gzip, size, row_ptr);
    require(z.ok == d.ok && z.error == d.error,
            "plain and gzip differ: '" + d.error + "' / '" + z.error + "'");
    if (d.ok)
      require(same_bits(z.a.row_ptr, d.a.row_ptr) && same_bits(z.a.col_idx, d.a.col_idx) &&
                  same_bits(z.a.values, d.a.values),
              "plain and gzip give different matrices");
  }
  const Outcome<float> f = read<float>(plain, text_bytes, row_ptr);
  if (d.ok) {
    require(f.ok, "float failed where double succeeded: " + f.error);
    require(same_bits(f.a.row_ptr, d.a.row_ptr) && same_bits(f.a.col_idx, d.a.col_idx),
            "float and double give different patterns");
    require(f.report.nonfinite.count == d.report.nonfinite.count &&
                f.report.overflow.count >= d.report.overflow.count,
            "float and double count non-finite values differently");
  } else if (!d.memory_error && !f.memory_error) {
    require(f.error == d.error,
            "float and double fail differently: '" + d.error + "' / '" + f.error + "'");
  }
  return 0;
}

// Matrix Market coordinate files: one pass over large chunks with std::from_chars, then a
// counting sort by row into CSR (columns sorted, duplicates summed).
#include "kspmv/io/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/io/text_file.hpp"

namespace kspmv::io {

namespace {
using detail::LineReader;

constexpr std::size_t kReadChunk = std::size_t(8) << 20;
constexpr std::size_t kHeaderChunk = std::size_t(64) << 10;

enum class Field { Real, Integer, Pattern };
enum class Symmetry { General, Symmetric, Skew };

struct Header {
  MatrixMarketInfo info;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
};

[[noreturn]] void fail(const LineReader& in, const std::string& message) {
  throw ParseError(in.path(), in.line_number(), message);
}

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The next blank-separated token of [p, e), advancing p past it (empty at the end of the line).
std::string_view next_token(const char*& p, const char* e) {
  while (p != e && is_blank(*p)) ++p;
  const char* b = p;
  while (p != e && !is_blank(*p)) ++p;
  return std::string_view(b, static_cast<std::size_t>(p - b));
}

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return r;
}

// The next blank-separated token of [p, e) as a T, read in one pass with std::from_chars; advances
// p past it, or fails naming `what` and quoting the token. A real number beyond T's range is
// read with C library semantics (+-inf, or 0 and subnormals), setting *out_of_range.
template <class T>
T parse_number(const LineReader& in, const char*& p, const char* e, const char* what,
               bool* out_of_range = nullptr) {
  constexpr bool real = std::is_floating_point_v<T>;
  while (p != e && is_blank(*p)) ++p;
  if (p == e) fail(in, std::string("missing ") + what);
  const char* b = p;
  if (real && *b == '+' && b + 1 != e && b[1] != '-') ++b;  // from_chars rejects a leading '+'
  T v{};
  const auto r = std::from_chars(b, e, v);
  const bool whole = r.ptr != b && (r.ptr == e || is_blank(*r.ptr));
  if (whole && r.ec == std::errc()) {
    p = r.ptr;
    return v;
  }
  if (real && whole && r.ec == std::errc::result_out_of_range) {
    const std::string s(b, r.ptr);
    p = r.ptr;
    *out_of_range = true;
    if constexpr (std::is_same_v<T, float>) return std::strtof(s.c_str(), nullptr);
    return static_cast<T>(std::strtod(s.c_str(), nullptr));
  }
  fail(in, std::string(real ? "expected a numeric " : "expected an integer ") + what + ", got " +
               quoted(next_token(p, e)));
}

Ordinal parse_index(const LineReader& in, const char*& p, const char* e, const char* what,
                    Ordinal n) {
  const long long v = parse_number<long long>(in, p, e, what);
  if (v < 1 || v > n)
    fail(in, std::string(what) + " " + std::to_string(v) + " is outside [1, " + std::to_string(n) +
                 "] (indices are 1-based)");
  return static_cast<Ordinal>(v);
}

void add(ValueCount& c, long line) {
  if (c.count++ == 0) c.first_line = line;
}

// A real value, counted in the report when it is not finite, overflows or underflows to 0.
template <class S>
S parse_value(const LineReader& in, const char*& p, const char* e, ReadReport& report) {
  bool out_of_range = false;
  const S v = parse_number<S>(in, p, e, "value", &out_of_range);
  if (!std::isfinite(v)) add(out_of_range ? report.overflow : report.nonfinite, in.line_number());
  if (out_of_range && v == S(0)) add(report.underflow, in.line_number());
  return v;
}

// The banner, comments and the size line (the format of Boisvert, Pozo & Remington 1996).
Header read_header(LineReader& in) {
  const std::string expected =
      "expected the banner '%%MatrixMarket matrix coordinate <field> <symmetry>'";
  std::string_view line;
  if (!in.next(line)) fail(in, "empty file, " + expected);
  const char* p = line.data();
  const char* e = p + line.size();
  const std::string_view banner = next_token(p, e);
  const std::string object = lower(next_token(p, e)), format = lower(next_token(p, e)),
                    field = lower(next_token(p, e)), symmetry = lower(next_token(p, e));
  if (banner != "%%MatrixMarket" || symmetry.empty() || !next_token(p, e).empty())
    fail(in, expected + ", got " + quoted(line));
  if (object != "matrix")
    fail(in, "object " + quoted(object) + " is not supported, expected 'matrix'");
  if (format == "array") fail(in, "array (dense) format is not supported, expected 'coordinate'");
  if (format != "coordinate")
    fail(in, "unknown format " + quoted(format) + ", expected 'coordinate'");

  Header h;
  if (field == "complex") fail(in, "complex field is not supported");
  if (field == "real") {
    h.field = Field::Real;
  } else if (field == "integer") {
    h.field = Field::Integer;
  } else if (field == "pattern") {
    h.field = Field::Pattern;
  } else {
    fail(in, "unknown field " + quoted(field) + ", expected real, integer or pattern");
  }
  if (symmetry == "hermitian") fail(in, "hermitian symmetry is not supported (complex only)");
  if (symmetry == "general") {
    h.symmetry = Symmetry::General;
  } else if (symmetry == "symmetric") {
    h.symmetry = Symmetry::Symmetric;
  } else if (symmetry == "skew-symmetric") {
    h.symmetry = Symmetry::Skew;
  } else {
    fail(in, "unknown symmetry " + quoted(symmetry) +
                 ", expected general, symmetric or skew-symmetric");
  }
  if (h.field == Field::Pattern && h.symmetry == Symmetry::Skew)
    fail(in, "a pattern matrix cannot be skew-symmetric");
  h.info.field = field;
  h.info.symmetry = symmetry;

  // Comments and blank lines, then "rows columns entries".
  for (;;) {
    if (!in.next(line)) fail(in, "file ends before the size line 'rows columns entries'");
    p = line.data();
    e = p + line.size();
    while (p != e && is_blank(*p)) ++p;
    if (p != e && *p != '%') break;
  }
  const char* q = p;
  if (next_token(q, e).empty() || next_token(q, e).empty() || next_token(q, e).empty() ||
      !next_token(q, e).empty())
    fail(in, "expected the size line 'rows columns entries', got " + quoted(line));
  const long long m = parse_number<long long>(in, p, e, "row count");
  const long long n = parse_number<long long>(in, p, e, "column count");
  const long long nnz = parse_number<long long>(in, p, e, "entry count");
  constexpr long long kMaxOrdinal = std::numeric_limits<Ordinal>::max();
  if (m < 0 || n < 0 || nnz < 0) fail(in, "negative size in the size line " + quoted(line));
  if (m > kMaxOrdinal || n > kMaxOrdinal)
    fail(in, "dimensions " + quoted(line) + " exceed 32-bit indices");
  if (h.symmetry != Symmetry::General && m != n)
    fail(in, "a " + symmetry + " matrix must be square, got " + std::to_string(m) + " x " +
                 std::to_string(n));
  h.info.nrows = static_cast<Ordinal>(m);
  h.info.ncols = static_cast<Ordinal>(n);
  h.info.entries = nnz;
  return h;
}

// A larger copy of the first `keep` elements of `v`.
template <class T>
void grow(HostView<T>& v, std::size_t size, Offset keep) {
  HostView<T> bigger = make_host_view<T>(v.label(), size);
  std::copy(v.data(), v.data() + keep, bigger.data());
  v = bigger;
}

// The entries in file order, 0-based; pattern values are 1.
template <class S>
struct Entries {
  HostView<Ordinal> rows, cols;
  HostView<S> vals;
  Offset count = 0;
  bool rows_sorted = true;  // row indices never decrease: the file is in CSR order
};

template <class S>
Entries<S> read_entries(LineReader& in, const Header& h, ReadReport& report) {
  const Offset declared = h.info.entries;
  // Allocate no more than the file can hold (an entry line takes >= 4 bytes; deflate expands at
  // most ~1032x), so that a corrupt size line cannot exhaust memory; grow if the size is unknown.
  const std::uint64_t most = in.file_bytes() > 0
                                 ? in.file_bytes() / 4 * (in.is_gzip() ? 1032 : 1) + 1
                                 : std::uint64_t(1) << 20;
  Offset capacity = static_cast<Offset>(std::min<std::uint64_t>(declared, most));
  Entries<S> t;
  t.rows = make_host_view<Ordinal>("kspmv::mm::rows", capacity);
  t.cols = make_host_view<Ordinal>("kspmv::csr::col_idx", capacity);
  t.vals = make_host_view<S>("kspmv::csr::values", capacity);

  Ordinal last_row = 0;
  int first_side = 0;  // of the diagonal, for symmetric storage: -1 upper, 1 lower
  std::string_view line;
  while (in.next(line)) {
    const char* p = line.data();
    const char* e = p + line.size();
    while (p != e && is_blank(*p)) ++p;
    if (p == e || *p == '%') continue;
    if (t.count == declared)
      fail(in, "more entries than the " + std::to_string(declared) + " declared in the size line");
    const Ordinal i = parse_index(in, p, e, "row index", h.info.nrows) - 1;
    const Ordinal j = parse_index(in, p, e, "column index", h.info.ncols) - 1;
    S v = 1;
    if (h.field == Field::Real) {
      v = parse_value<S>(in, p, e, report);
    } else if (h.field == Field::Integer) {
      v = static_cast<S>(parse_number<long long>(in, p, e, "value"));
    }
    const std::string_view extra = next_token(p, e);
    if (!extra.empty()) fail(in, "unexpected " + quoted(extra) + " after the entry");
    if (h.symmetry != Symmetry::General && i != j) {
      const int side = i > j ? 1 : -1;
      if (first_side == 0) first_side = side;
      if (side != first_side && report.both_triangles_line == 0)
        report.both_triangles_line = in.line_number();
    }
    if (h.symmetry == Symmetry::Skew && i == j)
      fail(in, "diagonal entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
                   ") in a skew-symmetric matrix");
    if (t.count == capacity) {
      capacity = std::min(declared, 2 * capacity);
      grow(t.rows, capacity, t.count);
      grow(t.cols, capacity, t.count);
      grow(t.vals, capacity, t.count);
    }
    t.rows(t.count) = i;
    t.cols(t.count) = j;
    t.vals(t.count) = v;
    ++t.count;
    t.rows_sorted = t.rows_sorted && i >= last_row;
    last_row = i;
  }
  if (t.count < declared)
    fail(in, "file ends after " + std::to_string(t.count) + " of the " + std::to_string(declared) +
                 " entries declared in the size line");
  return t;
}

// Sorts the columns of every row (stably: duplicates are summed in file order) and sums
// duplicate entries (a sum that overflows is counted in the report); returns `a` itself when
// there were none.
template <class S>
CsrMatrix<S> sort_rows_and_sum_duplicates(CsrMatrix<S>& a, ReadReport& report) {
  Ordinal* col = a.col_idx.data();
  S* val = a.values.data();
  std::vector<std::pair<Ordinal, S>> scratch;
  Offset out = 0;  // compaction in place: a row's merged entries start at or before its old start
  for (Ordinal i = 0; i < a.nrows; ++i) {
    const Offset b = a.row_ptr(i), e = a.row_ptr(i + 1);
    if (e - b <= 32) {  // short rows: insertion sort, nothing to do when already sorted
      for (Offset k = b + 1; k < e; ++k) {
        const Ordinal c = col[k];
        const S v = val[k];
        Offset p = k;
        for (; p > b && col[p - 1] > c; --p) {
          col[p] = col[p - 1];
          val[p] = val[p - 1];
        }
        col[p] = c;
        val[p] = v;
      }
    } else if (!std::is_sorted(col + b, col + e)) {
      scratch.clear();
      for (Offset k = b; k < e; ++k) scratch.emplace_back(col[k], val[k]);
      std::stable_sort(scratch.begin(), scratch.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (Offset k = b; k < e; ++k) std::tie(col[k], val[k]) = scratch[k - b];
    }
    const Offset row_start = out;
    for (Offset k = b; k < e; ++k) {
      if (out > row_start && col[out - 1] == col[k]) {
        const S sum = val[out - 1] + val[k];
        if (!std::isfinite(sum) && std::isfinite(val[out - 1]) && std::isfinite(val[k]))
          ++report.overflow.count;
        val[out - 1] = sum;
      } else {
        col[out] = col[k];
        val[out] = val[k];
        ++out;
      }
    }
    a.row_ptr(i) = row_start;
  }
  const Offset total = a.nnz();
  a.row_ptr(a.nrows) = out;
  if (out == total) return a;
  CsrMatrix<S> exact(a.nrows, a.ncols, out);
  std::copy(a.row_ptr.data(), a.row_ptr.data() + a.nrows + 1, exact.row_ptr.data());
  std::copy(col, col + out, exact.col_idx.data());
  std::copy(val, val + out, exact.values.data());
  return exact;
}

// Counting sort by row, mirroring symmetric storage. A general file already in row order keeps
// its column and value arrays as they are.
template <class S>
CsrMatrix<S> assemble(const Header& h, const Entries<S>& t, ReadReport& report) {
  const Ordinal m = h.info.nrows;
  const bool mirror = h.symmetry != Symmetry::General;
  const S sign = h.symmetry == Symmetry::Skew ? S(-1) : S(1);

  std::vector<Offset> next(std::size_t(m) + 1, 0);
  for (Offset k = 0; k < t.count; ++k) {
    ++next[t.rows(k) + 1];
    if (mirror && t.rows(k) != t.cols(k)) ++next[t.cols(k) + 1];
  }
  for (Ordinal i = 0; i < m; ++i) next[i + 1] += next[i];
  CsrMatrix<S> a;
  a.nrows = m;
  a.ncols = h.info.ncols;
  a.row_ptr = make_host_view<Offset>("kspmv::csr::row_ptr", std::size_t(m) + 1);
  std::copy(next.begin(), next.end(), a.row_ptr.data());
  if (!mirror && t.rows_sorted && Offset(t.cols.extent(0)) == t.count) {
    a.col_idx = t.cols;
    a.values = t.vals;
  } else {
    a.col_idx = make_host_view<Ordinal>("kspmv::csr::col_idx", next[m]);
    a.values = make_host_view<S>("kspmv::csr::values", next[m]);
    for (Offset k = 0; k < t.count; ++k) {
      const Ordinal r = t.rows(k), c = t.cols(k);
      const Offset at = next[r]++;
      a.col_idx(at) = c;
      a.values(at) = t.vals(k);
      if (mirror && r != c) {
        const Offset mirrored = next[c]++;
        a.col_idx(mirrored) = r;
        a.values(mirrored) = sign * t.vals(k);
      }
    }
  }
  return sort_rows_and_sum_duplicates(a, report);
}
template <class S>
void add_warnings(const Header& h, ReadReport& r) {
  const std::string precision = std::is_same_v<S, float> ? "float" : "double";
  auto add = [&](const ValueCount& c, const std::string& what, const char* otherwise) {
    if (c.count == 0) return;
    r.warnings.push_back(what + ": " + std::to_string(c.count) +
                         (c.first_line > 0
                              ? " (the first at line " + std::to_string(c.first_line) + ")"
                              : std::string(otherwise)));
  };
  add(r.nonfinite, "values that are NaN or infinite", "");
  add(r.overflow, "values that overflow " + precision + " to infinity",
      " (sums of duplicate entries)");
  add(r.underflow, "non-zero values that underflow " + precision + " to 0", "");
  if (r.both_triangles_line > 0)
    r.warnings.push_back(h.info.symmetry +
                         " storage with entries on both sides of the diagonal "
                         "(line " +
                         std::to_string(r.both_triangles_line) +
                         "): each is added to its mirror image, so an entry stored in both "
                         "triangles counts twice");
}
}  // namespace

MatrixMarketInfo read_matrix_market_info(const std::string& path) {
  LineReader in(path, kHeaderChunk, false);
  return read_header(in).info;
}

template <class S>
CsrMatrix<S> read_matrix_market(const std::string& path, const ReadOptions& options,
                                ReadReport* report_out) {
  LineReader in(path, kReadChunk, options.progress);
  const Header h = read_header(in);
  ReadReport report;
  report.info = h.info;
  auto a = assemble(h, read_entries<S>(in, h, report), report);
  add_warnings<S>(h, report);
  if (report_out) *report_out = std::move(report);
  return a;
}

template <class S>
void write_matrix_market(const std::string& path, const CsrMatrix<S>& a) {
  a.validate();
  detail::TextWriter out(path);
  out.write("%%MatrixMarket matrix coordinate real general\n");
  out.write(std::to_string(a.nrows) + " " + std::to_string(a.ncols) + " " +
            std::to_string(a.nnz()) + "\n");
  for (Ordinal i = 0; i < a.nrows; ++i) {
    for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k) {
      char* p = out.space(64);  // two 10-digit indices and a value of <= 24 characters
      p = std::to_chars(p, p + 11, i + 1).ptr;
      *p++ = ' ';
      p = std::to_chars(p, p + 11, a.col_idx(k) + 1).ptr;
      *p++ = ' ';
      p = std::to_chars(p, p + 32, a.values(k)).ptr;  // shortest exact round trip
      *p++ = '\n';
      out.commit(p);
    }
  }
  out.close();
}

template CsrMatrix<float> read_matrix_market<float>(const std::string&, const ReadOptions&,
                                                    ReadReport*);
template CsrMatrix<double> read_matrix_market<double>(const std::string&, const ReadOptions&,
                                                      ReadReport*);
template void write_matrix_market<float>(const std::string&, const CsrMatrix<float>&);
template void write_matrix_market<double>(const std::string&, const CsrMatrix<double>&);

}  // namespace kspmv::io

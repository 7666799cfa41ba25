// Matrix Market coordinate files: one pass over large chunks with std::from_chars into blocks of
// entries, then a counting sort by row into CSR (columns sorted, duplicates summed).
#include "kspmv/io/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
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
constexpr Offset kBlockEntries = Offset(1) << 16;

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

// Text of the file in a message: cut short, control characters escaped.
std::string quoted(std::string_view s) {
  return "'" + printable(s) + "'";
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

// The memory a read may still take: what was available when it began, less what it holds.
class Budget {
 public:
  explicit Budget(const Header& h, const std::string& path)
      : what_(path + ": a " + std::to_string(h.info.nrows) + " x " + std::to_string(h.info.ncols) +
              " matrix"),
        left_(available_memory()) {}
  // Throws MemoryError unless `bytes` more fit; `what` names them.
  void take(std::size_t bytes, const std::string& what) {
    if (bytes > left_) throw MemoryError(what_ + ", " + what, bytes, left_);
    left_ -= bytes;
  }
  void give(std::size_t bytes) { left_ += bytes; }

 private:
  std::string what_;
  std::size_t left_;
};

// An uninitialized host view of n elements, taken from the budget first.
template <class T>
HostView<T> allocate(Budget& budget, const char* label, Offset n, const std::string& what) {
  budget.take(std::size_t(n) * sizeof(T), what);
  return make_host_view<T>(label, std::size_t(n));
}

// The entries in file order, 0-based, in blocks allocated as entries arrive: a size line alone
// cannot make the reader allocate. Without kValues the values are not kept (pattern only).
template <class S, bool kValues>
class Entries {
 public:
  static constexpr std::size_t kEntryBytes = 2 * sizeof(Ordinal) + (kValues ? sizeof(S) : 0);

  Entries(Budget& budget, Offset declared) : budget_(budget), declared_(declared) {}
  ~Entries() {
    for (Block& b : blocks_) release(b);
  }
  Entries(const Entries&) = delete;
  Entries& operator=(const Entries&) = delete;

  Offset size() const { return count_; }
  bool rows_sorted() const { return rows_sorted_; }

  void push(Ordinal i, Ordinal j, S v) {
    if (blocks_.empty() || blocks_.back().size == blocks_.back().capacity) add_block();
    Block& b = blocks_.back();
    b.rows[b.size] = i;
    b.cols[b.size] = j;
    if constexpr (kValues) b.vals[b.size] = v;
    ++b.size;
    rows_sorted_ = rows_sorted_ && (count_ == 0 || i >= last_row_);
    last_row_ = i;
    ++count_;
  }

  // f(row, column, value) for every entry in file order; with `release`, each block is freed
  // once visited (no later visit is possible).
  template <class F>
  void for_each(F&& f, bool release_blocks) {
    for (Block& b : blocks_) {
      for (Offset k = 0; k < b.size; ++k) f(b.rows[k], b.cols[k], kValues ? b.vals[k] : S(1));
      if (release_blocks) release(b);
    }
  }

 private:
  struct Block {
    std::unique_ptr<Ordinal[]> rows, cols;
    std::unique_ptr<S[]> vals;
    Offset size = 0, capacity = 0;
  };

  void add_block() {
    Block b;
    b.capacity = std::min(kBlockEntries, declared_ - count_);  // push() keeps count_ < declared_
    budget_.take(std::size_t(b.capacity) * kEntryBytes,
                 "its first " + std::to_string(count_ + b.capacity) + " entries");
    b.rows.reset(new Ordinal[b.capacity]);
    b.cols.reset(new Ordinal[b.capacity]);
    if constexpr (kValues) b.vals.reset(new S[b.capacity]);
    blocks_.push_back(std::move(b));
  }
  void release(Block& b) {
    if (!b.rows) return;
    b.rows.reset();
    b.cols.reset();
    b.vals.reset();
    budget_.give(std::size_t(b.capacity) * kEntryBytes);
  }

  Budget& budget_;
  Offset declared_;
  std::vector<Block> blocks_;
  Offset count_ = 0;
  Ordinal last_row_ = 0;
  bool rows_sorted_ = true;  // row indices never decrease: the file is in CSR order
};

template <class S, bool kValues>
void read_entries(LineReader& in, const Header& h, Entries<S, kValues>& t, ReadReport& report) {
  const Offset declared = h.info.entries;
  int first_side = 0;  // of the diagonal, for symmetric storage: -1 upper, 1 lower
  std::string_view line;
  while (in.next(line)) {
    const char* p = line.data();
    const char* e = p + line.size();
    while (p != e && is_blank(*p)) ++p;
    if (p == e || *p == '%') continue;
    if (t.size() == declared)
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
    t.push(i, j, v);
  }
  if (t.size() < declared)
    fail(in, "file ends after " + std::to_string(t.size()) + " of the " + std::to_string(declared) +
                 " entries declared in the size line");
}

// Sorts the columns of every row (stably: duplicates are summed in file order) and sums
// duplicate entries (a sum that overflows is counted in the report); returns `a` itself when
// there were none. Without kValues only the columns are sorted and deduplicated.
template <class S, bool kValues>
CsrMatrix<S> sort_rows_and_sum_duplicates(CsrMatrix<S>& a, Budget& budget, ReadReport& report) {
  Ordinal* col = a.col_idx.data();
  S* val = a.values.data();
  std::vector<std::pair<Ordinal, S>> scratch;
  Offset out = 0;  // compaction in place: a row's merged entries start at or before its old start
  for (Ordinal i = 0; i < a.nrows; ++i) {
    const Offset b = a.row_ptr(i), e = a.row_ptr(i + 1);
    if (e - b <= 32) {  // short rows: insertion sort, nothing to do when already sorted
      for (Offset k = b + 1; k < e; ++k) {
        const Ordinal c = col[k];
        S v{};
        if constexpr (kValues) v = val[k];
        Offset p = k;
        for (; p > b && col[p - 1] > c; --p) {
          col[p] = col[p - 1];
          if constexpr (kValues) val[p] = val[p - 1];
        }
        col[p] = c;
        if constexpr (kValues) val[p] = v;
      }
    } else if (!std::is_sorted(col + b, col + e)) {
      if constexpr (kValues) {
        scratch.clear();
        for (Offset k = b; k < e; ++k) scratch.emplace_back(col[k], val[k]);
        std::stable_sort(scratch.begin(), scratch.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        for (Offset k = b; k < e; ++k) std::tie(col[k], val[k]) = scratch[k - b];
      } else {
        std::sort(col + b, col + e);
      }
    }
    const Offset row_start = out;
    for (Offset k = b; k < e; ++k) {
      if (out > row_start && col[out - 1] == col[k]) {
        if constexpr (kValues) {
          const S sum = val[out - 1] + val[k];
          if (!std::isfinite(sum) && std::isfinite(val[out - 1]) && std::isfinite(val[k]))
            ++report.overflow.count;
          val[out - 1] = sum;
        }
      } else {
        col[out] = col[k];
        if constexpr (kValues) val[out] = val[k];
        ++out;
      }
    }
    a.row_ptr(i) = row_start;
  }
  const Offset total = a.nnz();
  a.row_ptr(a.nrows) = out;
  if (out == total) return a;
  CsrMatrix<S> exact;
  exact.nrows = a.nrows;
  exact.ncols = a.ncols;
  exact.row_ptr = a.row_ptr;
  const std::string what = std::to_string(out) + " entries once duplicates are summed";
  exact.col_idx = allocate<Ordinal>(budget, "kspmv::csr::col_idx", out, what);
  std::copy(col, col + out, exact.col_idx.data());
  if constexpr (kValues) {
    exact.values = allocate<S>(budget, "kspmv::csr::values", out, what);
    std::copy(val, val + out, exact.values.data());
  }
  return exact;
}

// Counting sort by row into CSR over `m` rows, entry (i, j) going to row row_of(i), mirrored
// for symmetric storage; the blocks are freed as they are consumed. The arrays are taken from
// the budget before they are allocated.
template <class S, bool kValues, class RowOf>
CsrMatrix<S> assemble(const Header& h, Ordinal m, const RowOf& row_of, Entries<S, kValues>& t,
                      Budget& budget, ReadReport& report) {
  const bool mirror = h.symmetry != Symmetry::General;
  const S sign = h.symmetry == Symmetry::Skew ? S(-1) : S(1);
  CsrMatrix<S> a;
  a.nrows = m;
  a.ncols = h.info.ncols;
  a.row_ptr = allocate<Offset>(budget, "kspmv::csr::row_ptr", Offset(m) + 1, "its row pointers");
  std::fill_n(a.row_ptr.data(), std::size_t(m) + 1, Offset(0));
  t.for_each(
      [&](Ordinal i, Ordinal j, S) {
        ++a.row_ptr(row_of(i) + 1);
        if (mirror && i != j) ++a.row_ptr(row_of(j) + 1);
      },
      false);
  for (Ordinal r = 0; r < m; ++r) a.row_ptr(r + 1) += a.row_ptr(r);
  const Offset nnz = a.row_ptr(m);
  const std::string what = std::to_string(nnz) + " entries";
  a.col_idx = allocate<Ordinal>(budget, "kspmv::csr::col_idx", nnz, what);
  if constexpr (kValues) a.values = allocate<S>(budget, "kspmv::csr::values", nnz, what);
  auto put = [&](Offset at, Ordinal j, S v) {
    a.col_idx(at) = j;
    if constexpr (kValues) a.values(at) = v;
  };
  if (!mirror && t.rows_sorted()) {  // already in row order
    Offset at = 0;
    t.for_each([&](Ordinal, Ordinal j, S v) { put(at++, j, v); }, true);
  } else {  // row_ptr(r) is row r's next free slot, then shifted back by one row
    t.for_each(
        [&](Ordinal i, Ordinal j, S v) {
          put(a.row_ptr(row_of(i))++, j, v);
          if (mirror && i != j) put(a.row_ptr(row_of(j))++, i, sign * v);
        },
        true);
    for (Ordinal r = m; r > 0; --r) a.row_ptr(r) = a.row_ptr(r - 1);
    a.row_ptr(0) = 0;
  }
  return sort_rows_and_sum_duplicates<S, kValues>(a, budget, report);
}

// Ids (rows or columns) mapped to [0, size()) in order, in memory proportional to the entries:
// the identity when the declared count n is not much larger than the number of ids given,
// otherwise ranks among the distinct ids present (the others are left out).
class IdMap {
 public:
  // each(f) calls f(id) for every id present (`count` of them).
  template <class Each>
  IdMap(Ordinal n, Offset count, const Each& each, Budget& budget, const char* what)
      : size_(n), dense_(Offset(n) <= count + kBlockEntries) {
    if (dense_) return;
    budget.take(std::size_t(count) * sizeof(Ordinal), what);
    distinct_.reserve(std::size_t(count));
    each([&](Ordinal id) { distinct_.push_back(id); });
    std::sort(distinct_.begin(), distinct_.end());
    distinct_.erase(std::unique(distinct_.begin(), distinct_.end()), distinct_.end());
    size_ = static_cast<Ordinal>(distinct_.size());
  }
  Ordinal size() const { return size_; }
  Ordinal operator()(Ordinal id) const {
    if (dense_) return id;
    return static_cast<Ordinal>(std::lower_bound(distinct_.begin(), distinct_.end(), id) -
                                distinct_.begin());
  }

 private:
  Ordinal size_;
  bool dense_;
  std::vector<Ordinal> distinct_;
};

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
  Budget budget(h, in.path());
  Entries<S, true> t(budget, h.info.entries);
  read_entries(in, h, t, report);
  auto a = assemble(
      h, h.info.nrows, [](Ordinal i) { return i; }, t, budget, report);
  add_warnings<S>(h, report);
  if (report_out) *report_out = std::move(report);
  return a;
}

PatternCounts read_matrix_market_counts(const std::string& path, const ReadOptions& options,
                                        ReadReport& report) {
  LineReader in(path, kReadChunk, options.progress);
  const Header h = read_header(in);
  report = ReadReport();
  report.info = h.info;
  Budget budget(h, in.path());
  Entries<double, false> t(budget, h.info.entries);
  read_entries(in, h, t, report);
  // Rows: those of the entries, and their columns too when mirrored.
  const bool mirror = h.symmetry != Symmetry::General;
  const IdMap rows(
      h.info.nrows, (mirror ? 2 : 1) * t.size(),
      [&](const auto& f) {
        t.for_each(
            [&](Ordinal i, Ordinal j, double) {
              f(i);
              if (mirror) f(j);
            },
            false);
      },
      budget, "the ids of its rows");
  const CsrMatrix<double> a = assemble(h, rows.size(), rows, t, budget, report);
  const Offset nnz = a.nnz();
  const IdMap cols(
      h.info.ncols, nnz,
      [&](const auto& f) {
        for (Offset k = 0; k < nnz; ++k) f(a.col_idx(k));
      },
      budget, "the ids of its columns");
  PatternCounts counts{a.row_ptr, allocate<Offset>(budget, "kspmv::mm::col_ptr",
                                                   Offset(cols.size()) + 1, "column counts")};
  std::fill_n(counts.col_ptr.data(), std::size_t(cols.size()) + 1, Offset(0));
  for (Offset k = 0; k < nnz; ++k) ++counts.col_ptr(cols(a.col_idx(k)) + 1);
  for (Ordinal c = 0; c < cols.size(); ++c) counts.col_ptr(c + 1) += counts.col_ptr(c);
  add_warnings<double>(h, report);
  return counts;
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

// Matrix Market coordinate files: one pass over large chunks, each cut into pieces of whole lines
// parsed on the host threads with std::from_chars into blocks of entries and joined in file
// order, then a counting sort by row into CSR (columns sorted, duplicates summed), in parallel
// where the file is in row order already.
#include "kspmv/io/matrix_market.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/core/parallel.hpp"
#include "kspmv/io/text_file.hpp"

namespace kspmv::io {

namespace {
using detail::LineReader;

constexpr std::size_t kReadChunk = std::size_t(8) << 20;  // per read, 4 MiB more per thread
constexpr std::size_t kMaxReadChunk = std::size_t(64) << 20;
constexpr std::size_t kHeaderChunk = std::size_t(64) << 10;
#ifndef KSPMV_FUZZ_SMALL_SPLITS
constexpr std::size_t kMinPieceBytes = std::size_t(1) << 20;  // a chunk's pieces: at least this
constexpr Offset kBlockEntries = Offset(1) << 16;
constexpr std::int64_t kRowGrain = std::int64_t(1) << 14;  // rows per block of the threads
#else
// The fuzz build (unit_tests/fuzz): inputs of a few KB reach the pieces parsed on several
// threads, entries in several blocks and rows in several blocks, as files of megabytes do.
constexpr std::size_t kMinPieceBytes = 64;
constexpr Offset kBlockEntries = 16;
constexpr std::int64_t kRowGrain = 4;
#endif

enum class Field { Real, Integer, Pattern };
enum class Symmetry { General, Symmetric, Skew };

struct Header {
  MatrixMarketInfo info;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  bool array = false;  // dense, column by column (vectors only: read_matrix_market_vector)
};

[[noreturn]] void fail(const LineReader& in, const std::string& message) {
  throw ParseError(in.path(), in.line_number(), message);
}

// An error at line `line` (of the file, or of a piece parsed apart) before the file's name is at
// hand: the reader makes it a ParseError.
struct LineError {
  long line;
  std::string message;
};
[[noreturn]] void fail_at(long line, const std::string& message) {
  throw LineError{line, message};
}

// The read size for a machine of `threads` threads.
std::size_t read_chunk(int threads) {
  return std::clamp(std::size_t(threads) * (std::size_t(4) << 20), kReadChunk, kMaxReadChunk);
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
T parse_number(long line, const char*& p, const char* e, const char* what,
               bool* out_of_range = nullptr) {
  constexpr bool real = std::is_floating_point_v<T>;
  while (p != e && is_blank(*p)) ++p;
  if (p == e) fail_at(line, std::string("missing ") + what);
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
  fail_at(line, std::string(real ? "expected a numeric " : "expected an integer ") + what +
                    ", got " + quoted(next_token(p, e)));
}

Ordinal parse_index(long line, const char*& p, const char* e, const char* what, Ordinal n) {
  const long long v = parse_number<long long>(line, p, e, what);
  if (v < 1 || v > n)
    fail_at(line, std::string(what) + " " + std::to_string(v) + " is outside [1, " +
                      std::to_string(n) + "] (indices are 1-based)");
  return static_cast<Ordinal>(v);
}

void add(ValueCount& c, long line) {
  if (c.count++ == 0) c.first_line = line;
}

// A real value, counted in the report when it is not finite, overflows or underflows to 0.
template <class S>
S parse_value(long line, const char*& p, const char* e, ReadReport& report) {
  bool out_of_range = false;
  const S v = parse_number<S>(line, p, e, "value", &out_of_range);
  if (!std::isfinite(v)) add(out_of_range ? report.overflow : report.nonfinite, line);
  if (out_of_range && v == S(0)) add(report.underflow, line);
  return v;
}

Header read_header_lines(LineReader& in, bool array);

// The banner, comments and the size line (the format of Boisvert, Pozo & Remington 1996):
// 'coordinate', or with `array` (a dense vector) 'array' only.
Header read_header(LineReader& in, bool array = false) {
  try {
    return read_header_lines(in, array);
  } catch (const LineError& e) {
    throw ParseError(in.path(), e.line, e.message);
  }
}

Header read_header_lines(LineReader& in, bool array) {
  const std::string format_wanted = array ? "array" : "coordinate";
  const std::string expected =
      "expected the banner '%%MatrixMarket matrix " + format_wanted + " <field> <symmetry>'";
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
  if (format == "array" && !array)
    fail(in, "array (dense) format is not supported, expected 'coordinate'");
  if (format == "coordinate" && array)
    fail(in, "coordinate (sparse) format is not supported for a vector, expected 'array'");
  if (format != "coordinate" && format != "array")
    fail(in, "unknown format " + quoted(format) + ", expected '" + format_wanted + "'");

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
  h.array = array;
  if (array && (h.field == Field::Pattern || h.symmetry != Symmetry::General))
    fail(in, "a vector is 'array real general' or 'array integer general', got " + quoted(line));
  h.info.field = field;
  h.info.symmetry = symmetry;

  // Comments and blank lines, then "rows columns entries" ("rows columns" for an array).
  const std::string size_line = array ? "'rows columns'" : "'rows columns entries'";
  for (;;) {
    if (!in.next(line)) fail(in, "file ends before the size line " + size_line);
    p = line.data();
    e = p + line.size();
    while (p != e && is_blank(*p)) ++p;
    if (p != e && *p != '%') break;
  }
  const char* q = p;
  if (next_token(q, e).empty() || next_token(q, e).empty() ||
      (!array && next_token(q, e).empty()) || !next_token(q, e).empty())
    fail(in, "expected the size line " + size_line + ", got " + quoted(line));
  const long line_no = in.line_number();
  const long long m = parse_number<long long>(line_no, p, e, "row count");
  const long long n = parse_number<long long>(line_no, p, e, "column count");
  const long long nnz = array ? m * n : parse_number<long long>(line_no, p, e, "entry count");
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
  // Throws MemoryError unless `bytes` more fit; `what` names them. Thread-safe.
  void take(std::size_t bytes, const std::string& what) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > left_) throw MemoryError(what_ + ", " + what, bytes, left_);
    left_ -= bytes;
  }
  void give(std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    left_ += bytes;
  }

 private:
  std::string what_;
  std::size_t left_;
  std::mutex mutex_;
};

// An uninitialized host view of n elements, taken from the budget first.
template <class T>
HostView<T> allocate(Budget& budget, const char* label, Offset n, const std::string& what) {
  budget.take(std::size_t(n) * sizeof(T), what);
  return make_host_view<T>(label, std::size_t(n));
}

// The entries in file order, 0-based, in blocks allocated as entries arrive, at most `limit` of
// them: a size line alone cannot make the reader allocate. Without kValues the values are not
// kept (pattern only). A piece of the file fills one apart; append() joins them in file order.
template <class S, bool kValues>
class Entries {
 public:
  static constexpr std::size_t kEntryBytes = 2 * sizeof(Ordinal) + (kValues ? sizeof(S) : 0);

  Entries(Budget& budget, Offset limit) : budget_(budget), limit_(limit) {}
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
    if (count_ == 0) first_row_ = i;
    rows_sorted_ = rows_sorted_ && (count_ == 0 || i >= last_row_);
    last_row_ = i;
    ++count_;
  }

  // Moves the blocks of `next` (the entries that follow in the file) behind these.
  void append(Entries&& next) {
    if (next.count_ == 0) return;
    rows_sorted_ =
        rows_sorted_ && next.rows_sorted_ && (count_ == 0 || next.first_row_ >= last_row_);
    if (count_ == 0) first_row_ = next.first_row_;
    last_row_ = next.last_row_;
    count_ += next.count_;
    for (Block& b : next.blocks_) blocks_.push_back(std::move(b));
    next.blocks_.clear();
    next.count_ = 0;
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

  // f(rows, cols, vals (null without kValues), count, first) for every block on the host
  // threads, `first` the index of its first entry in file order; with `release`, each block is
  // freed once visited.
  template <class F>
  void for_each_block(const F& f, bool release_blocks) {
    std::vector<Offset> first(blocks_.size() + 1, 0);
    for (std::size_t b = 0; b < blocks_.size(); ++b) first[b + 1] = first[b] + blocks_[b].size;
    parallel_blocks(static_cast<std::int64_t>(blocks_.size()), 1,
                    [&](std::int64_t begin, std::int64_t end) {
                      for (std::int64_t k = begin; k < end; ++k) {
                        Block& b = blocks_[k];
                        f(b.rows.get(), b.cols.get(), b.vals.get(), b.size, first[k]);
                        if (release_blocks) release(b);
                      }
                    });
  }

 private:
  struct Block {
    std::unique_ptr<Ordinal[]> rows, cols;
    std::unique_ptr<S[]> vals;
    Offset size = 0, capacity = 0;
  };

  void add_block() {
    Block b;
    b.capacity = std::min(kBlockEntries, limit_ - count_);  // the caller keeps count_ < limit_
    budget_.take(std::size_t(b.capacity) * kEntryBytes,
                 "blocks of " + std::to_string(b.capacity) + " entries after the " +
                     std::to_string(count_) + " of this part of the file");
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
  Offset limit_;
  std::vector<Block> blocks_;
  Offset count_ = 0;
  Ordinal first_row_ = 0, last_row_ = 0;
  bool rows_sorted_ = true;  // row indices never decrease: the file is in CSR order
};

// One piece of the entry lines (whole lines), parsed apart from the others: its entries, its
// number of lines, the counts of its values, the sides of the diagonal its entries lie on and its
// first error, with line numbers counted from the piece's first line (1).
template <class S, bool kValues>
struct Piece {
  Piece(Budget& budget, Offset limit) : entries(budget, limit) {}
  Entries<S, kValues> entries;
  long lines = 0;
  ReadReport counts;           // nonfinite, overflow, underflow
  int first_side = 0;          // of the first off-diagonal entry: -1 upper, 1 lower
  long side_line[2] = {0, 0};  // the first line with an entry in the upper [0], lower [1] part
  std::optional<LineError> error;
};

// Parses the lines of `text` into `piece` until its end or its first error: an entry past `room`
// is the error "more entries than the `declared` declared", as is everything wrong in a line.
template <class S, bool kValues>
void parse_piece(std::string_view text, const Header& h, Offset declared, Offset room,
                 Piece<S, kValues>& piece) {
  const char* next = text.data();
  const char* const end = next + text.size();
  try {
    while (next != end) {
      const char* nl = static_cast<const char*>(std::memchr(next, '\n', std::size_t(end - next)));
      const char* const b = next;  // the line is [b, nl)
      next = nl + 1;
      const long line = ++piece.lines;
      const char* p = b;
      const char* e = nl;
      while (p != e && is_blank(*p)) ++p;
      if (p != e && *p == '%') continue;  // a comment, of any length
      if (std::size_t(e - b) > detail::kMaxLineBytes) fail_at(line, detail::long_line_message());
      if (p == e) continue;
      if (piece.entries.size() == room)
        fail_at(line,
                "more entries than the " + std::to_string(declared) + " declared in the size line");
      const Ordinal i = parse_index(line, p, e, "row index", h.info.nrows) - 1;
      const Ordinal j = parse_index(line, p, e, "column index", h.info.ncols) - 1;
      S v = 1;
      if (h.field == Field::Real) {
        v = parse_value<S>(line, p, e, piece.counts);
      } else if (h.field == Field::Integer) {
        v = static_cast<S>(parse_number<long long>(line, p, e, "value"));
      }
      const std::string_view extra = next_token(p, e);
      if (!extra.empty()) fail_at(line, "unexpected " + quoted(extra) + " after the entry");
      if (h.symmetry != Symmetry::General && i != j) {
        const int side = i > j ? 1 : -1;
        if (piece.first_side == 0) piece.first_side = side;
        long& first = piece.side_line[side > 0];
        if (first == 0) first = line;
      }
      if (h.symmetry == Symmetry::Skew && i == j)
        fail_at(line, "diagonal entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
                          ") in a skew-symmetric matrix");
      piece.entries.push(i, j, v);
    }
  } catch (const LineError& e) {
    piece.error = e;
  }
}

// Whole lines of `text` in about `parts` pieces of similar size: their ends (after a '\n').
std::vector<std::size_t> piece_ends(std::string_view text, int parts) {
  std::vector<std::size_t> ends;
  for (int k = 1; k < parts; ++k) {
    const std::size_t at = text.size() * std::size_t(k) / std::size_t(parts);
    const std::size_t nl = text.find('\n', std::max(at, ends.empty() ? 0 : ends.back()));
    if (nl == std::string_view::npos || nl + 1 >= text.size()) break;
    if (ends.empty() || nl + 1 > ends.back()) ends.push_back(nl + 1);
  }
  ends.push_back(text.size());
  return ends;
}

// The entry lines after the size line, a chunk at a time: each chunk cut into pieces parsed on
// the host threads, then joined in file order; the first error in file order is thrown, with its
// line. Equivalent to parsing the lines one by one.
template <class S, bool kValues>
void read_entries(LineReader& in, const Header& h, Budget& budget, Entries<S, kValues>& t,
                  ReadReport& report) {
  const Offset declared = h.info.entries;
  const int threads = host_threads();
  int first_side = 0;  // of the diagonal, for symmetric storage: -1 upper, 1 lower
  std::string_view chunk;
  while (in.next_block(chunk)) {
    const int parts = static_cast<int>(
        std::clamp<std::size_t>(chunk.size() / kMinPieceBytes, 1, std::size_t(threads)));
    const std::vector<std::size_t> ends = piece_ends(chunk, parts);
    const auto text = [&](std::size_t k) {
      const std::size_t begin = k == 0 ? 0 : ends[k - 1];
      return chunk.substr(begin, ends[k] - begin);
    };
    // At most the room left, and no more than the text can hold (4 bytes a line at least).
    const Offset room = declared - t.size();
    std::vector<std::unique_ptr<Piece<S, kValues>>> pieces;
    for (std::size_t k = 0; k < ends.size(); ++k)
      pieces.push_back(std::make_unique<Piece<S, kValues>>(
          budget, std::min<Offset>(room, Offset(text(k).size() / 4) + 1)));
    parallel_blocks(static_cast<std::int64_t>(pieces.size()), 1,
                    [&](std::int64_t begin, std::int64_t end) {
                      for (std::int64_t k = begin; k < end; ++k)
                        parse_piece(text(k), h, declared, room, *pieces[k]);
                    });
    long base = in.line_number();  // the line before the piece
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      Piece<S, kValues>& q = *pieces[k];
      if (q.entries.size() > declared - t.size()) {  // the pieces before took the room it had
        Piece<S, kValues> again(budget, declared - t.size());
        parse_piece(text(k), h, declared, declared - t.size(), again);
        throw ParseError(in.path(), base + again.error->line, again.error->message);
      }
      if (q.error) throw ParseError(in.path(), base + q.error->line, q.error->message);
      for (auto [mine, theirs] : {std::pair{&report.nonfinite, &q.counts.nonfinite},
                                  std::pair{&report.overflow, &q.counts.overflow},
                                  std::pair{&report.underflow, &q.counts.underflow}}) {
        if (mine->count == 0 && theirs->count > 0) mine->first_line = base + theirs->first_line;
        mine->count += theirs->count;
      }
      if (first_side == 0) first_side = q.first_side;
      const long other = first_side == 0 ? 0 : q.side_line[first_side < 0];
      if (report.both_triangles_line == 0 && other > 0) report.both_triangles_line = base + other;
      t.append(std::move(q.entries));
      base += q.lines;
    }
    in.add_lines(base - in.line_number());
  }
  if (t.size() < declared)
    fail(in, "file ends after " + std::to_string(t.size()) + " of the " + std::to_string(declared) +
                 " entries declared in the size line");
}

// Sorts the columns of row [b, e) stably (duplicates stay in file order): insertion for short
// rows, nothing to do when already sorted.
template <class S, bool kValues>
void sort_row(Ordinal* col, S* val, Offset b, Offset e,
              std::vector<std::pair<Ordinal, S>>& scratch) {
  if (e - b <= 32) {
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
}

// Sorts the columns of every row (stably: duplicates are summed in file order) and sums
// duplicate entries (a sum that overflows is counted in the report); returns `a` itself when
// there were none. Without kValues only the columns are sorted and deduplicated.
template <class S, bool kValues>
CsrMatrix<S> sort_rows_and_sum_duplicates(CsrMatrix<S>& a, Budget& budget, ReadReport& report) {
  Ordinal* col = a.col_idx.data();
  S* val = a.values.data();
  // The rows sorted on the host threads (each row alone), their duplicate columns counted.
  std::atomic<Offset> duplicates{0};
  parallel_blocks(a.nrows, kRowGrain, [&](std::int64_t first, std::int64_t last) {
    std::vector<std::pair<Ordinal, S>> scratch;
    Offset found = 0;
    for (std::int64_t i = first; i < last; ++i) {
      const Offset b = a.row_ptr(i), e = a.row_ptr(i + 1);
      sort_row<S, kValues>(col, val, b, e, scratch);
      for (Offset k = b + 1; k < e; ++k) found += col[k] == col[k - 1];
    }
    duplicates += found;
  });
  if (duplicates == 0) return a;
  Offset out = 0;  // compaction in place: a row's merged entries start at or before its old start
  for (Ordinal i = 0; i < a.nrows; ++i) {
    const Offset b = a.row_ptr(i), e = a.row_ptr(i + 1);
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
  Offset* const count = a.row_ptr.data() + 1;  // row r's entries, then the prefix sums
  parallel_blocks(Offset(m) + 1, kRowGrain, [&](std::int64_t b, std::int64_t e) {
    std::fill(a.row_ptr.data() + b, a.row_ptr.data() + e, Offset(0));
  });
  t.for_each_block(
      [&](const Ordinal* rows, const Ordinal* cols, const S*, Offset size, Offset) {
        if (mirror) {
          for (Offset k = 0; k < size; ++k) {
            fetch_add(count + row_of(rows[k]), 1);
            if (rows[k] != cols[k]) fetch_add(count + row_of(cols[k]), 1);
          }
          return;
        }
        for (Offset k = 0; k < size;) {  // a run of one row is counted at once
          const Ordinal i = rows[k];
          const Offset run_begin = k;
          while (k < size && rows[k] == i) ++k;
          fetch_add(count + row_of(i), k - run_begin);
        }
      },
      false);
  inclusive_scan(count, m);
  const Offset nnz = a.row_ptr(m);
  const std::string what = std::to_string(nnz) + " entries";
  a.col_idx = allocate<Ordinal>(budget, "kspmv::csr::col_idx", nnz, what);
  if constexpr (kValues) a.values = allocate<S>(budget, "kspmv::csr::values", nnz, what);
  auto put = [&](Offset at, Ordinal j, S v) {
    a.col_idx(at) = j;
    if constexpr (kValues) a.values(at) = v;
  };
  if (!mirror && t.rows_sorted()) {  // already in row order: each block to its place
    t.for_each_block(
        [&](const Ordinal*, const Ordinal* cols, const S* vals, Offset size, Offset first) {
          std::copy(cols, cols + size, a.col_idx.data() + first);
          if constexpr (kValues) std::copy(vals, vals + size, a.values.data() + first);
        },
        true);
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
  LineReader in(path, read_chunk(host_threads()), options.progress);
  const Header h = read_header(in);
  ReadReport report;
  report.info = h.info;
  Budget budget(h, in.path());
  Entries<S, true> t(budget, h.info.entries);
  read_entries(in, h, budget, t, report);
  auto a = assemble(
      h, h.info.nrows, [](Ordinal i) { return i; }, t, budget, report);
  add_warnings<S>(h, report);
  if (report_out) *report_out = std::move(report);
  return a;
}

template <class S>
std::vector<S> read_matrix_market_vector(const std::string& path, ReadReport* report_out) {
  LineReader in(path, kReadChunk, false);
  const Header h = read_header(in, true);
  if (h.info.ncols != 1)
    fail(in, "a " + std::to_string(h.info.nrows) + " x " + std::to_string(h.info.ncols) +
                 " array is not a vector (rows x 1)");
  ReadReport report;
  report.info = h.info;
  Budget(h, in.path()).take(std::size_t(h.info.nrows) * sizeof(S), "its values");
  std::vector<S> v;
  v.reserve(std::size_t(h.info.nrows));
  std::string_view line;
  while (in.next(line)) {
    const char* p = line.data();
    const char* e = p + line.size();
    while (p != e && is_blank(*p)) ++p;
    if (p == e || *p == '%') continue;  // blank lines and comments
    if (v.size() == std::size_t(h.info.nrows))
      fail(in, "more values than the " + std::to_string(h.info.nrows) + " the size line says");
    try {
      v.push_back(parse_value<S>(in.line_number(), p, e, report));
      if (!next_token(p, e).empty()) fail_at(in.line_number(), "expected one value a line");
    } catch (const LineError& err) {
      throw ParseError(in.path(), err.line, err.message);
    }
  }
  if (v.size() != std::size_t(h.info.nrows))
    fail(in, "file ends after " + std::to_string(v.size()) + " of " + std::to_string(h.info.nrows) +
                 " values");
  add_warnings<S>(h, report);
  if (report_out) *report_out = std::move(report);
  return v;
}

template <class S>
void write_matrix_market_vector(const std::string& path, const S* v, std::size_t n) {
  detail::TextWriter out(path);
  out.write("%%MatrixMarket matrix array real general\n");
  out.write(std::to_string(n) + " 1\n");
  for (std::size_t i = 0; i < n; ++i) {
    char* p = out.space(64);
    p = std::to_chars(p, p + 32, v[i]).ptr;  // shortest exact round trip
    *p++ = '\n';
    out.commit(p);
  }
  out.close();
}

PatternCounts read_matrix_market_counts(const std::string& path, const ReadOptions& options,
                                        ReadReport& report) {
  LineReader in(path, read_chunk(host_threads()), options.progress);
  const Header h = read_header(in);
  report = ReadReport();
  report.info = h.info;
  Budget budget(h, in.path());
  Entries<double, false> t(budget, h.info.entries);
  read_entries(in, h, budget, t, report);
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
template std::vector<float> read_matrix_market_vector<float>(const std::string&, ReadReport*);
template std::vector<double> read_matrix_market_vector<double>(const std::string&, ReadReport*);
template void write_matrix_market_vector<float>(const std::string&, const float*, std::size_t);
template void write_matrix_market_vector<double>(const std::string&, const double*, std::size_t);

}  // namespace kspmv::io

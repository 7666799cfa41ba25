// Plain or gzip-compressed text files read as whole lines from large chunks, and written through
// a large buffer. The Matrix Market reader and writer are built on these; zlib stays private.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

struct gzFile_s;  // zlib's gzFile is `gzFile_s*`

namespace kspmv::io::detail {

// The longest line read; a longer one is a ParseError, unless it is a comment (its first
// non-blank character is '%'): that is cut to this length and the rest skipped.
constexpr std::size_t kMaxLineBytes = std::size_t(1) << 20;

// How a path is named in messages: "-" is standard input or output.
std::string display_name(const std::string& path, bool output);

// What is wrong with a line longer than kMaxLineBytes that is not a comment.
std::string long_line_message();

class LineReader {
 public:
  // Opens `path` ("-": standard input); gzip is recognized by its magic bytes, whatever the
  // name, on a pipe as well. `chunk_bytes` is the size of one read. With `progress`, files over
  // 50 MB show a progress line on stderr when stderr is a terminal. Throws ParseError(path, 0,
  // ...) when the file cannot be opened.
  LineReader(const std::string& path, std::size_t chunk_bytes, bool progress);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n'; false at the end of the file. Throws ParseError on a read
  // error, corrupt or truncated gzip data, or a line longer than kMaxLineBytes.
  bool next(std::string_view& line) {
    if (pos_ == lines_end_ && !refill()) return false;
    const char* b = buf_.get() + pos_;
    // refill() guarantees that [pos_, lines_end_) ends with '\n'.
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', lines_end_ - pos_));
    line = std::string_view(b, static_cast<std::size_t>(nl - b));
    pos_ = static_cast<std::size_t>(nl + 1 - buf_.get());
    ++line_;
    if (line.size() > kMaxLineBytes) line = long_line(line, line_);
    return true;
  }

  // The lines not returned yet, as one block of whole lines (each ends in '\n'; long comments
  // cut as next() cuts them, other lines as they are), up to the chunk size at a time; false at
  // the end of the file. The caller counts the block's lines and calls add_lines() with their
  // number before it reads on, so that line numbers stay right.
  bool next_block(std::string_view& lines) {
    if (pos_ == lines_end_ && !refill()) return false;
    lines = std::string_view(buf_.get() + pos_, lines_end_ - pos_);
    pos_ = lines_end_;
    return true;
  }
  void add_lines(long count) { line_ += count; }

  // 1-based number of the line last returned by next() (0 before the first).
  long line_number() const { return line_; }
  // The path as messages name it ("<stdin>" for "-").
  const std::string& path() const { return path_; }

 private:
  bool refill();
  std::size_t read_some(char* dst, std::size_t n);
  // `line` (number `number`) cut to kMaxLineBytes when it is a comment; else throws ParseError.
  std::string_view long_line(std::string_view line, long number) const;
  void show_progress(bool done);

  std::string path_;
  gzFile_s* gz_ = nullptr;
  std::uint64_t file_bytes_ = 0;  // of a regular file (compressed size for gzip), else 0
  std::unique_ptr<char[]> buf_;
  std::size_t capacity_ = 0;
  std::size_t full_capacity_ = 0;  // what capacity_ grows to when a line does not fit
  std::size_t pos_ = 0;            // next unread byte
  std::size_t lines_end_ = 0;      // one past the last '\n' in the buffer
  std::size_t data_end_ = 0;       // one past the last byte read
  bool eof_ = false;
  bool skipping_ = false;  // dropping the rest of a long comment line
  long line_ = 0;
  bool progress_ = false;
  std::chrono::steady_clock::time_point start_, last_shown_;
};

class TextWriter {
 public:
  // Writes `path`, gzip-compressed when it ends in ".gz"; "-" is standard output. A regular
  // file (or a new one) is written to a temporary file beside it (beside the file a symbolic
  // link points to) that replaces it only on a successful close(): a failure leaves the old
  // file as it was. The temporary file is unnamed (O_TMPFILE, nothing left if the process is
  // killed) where the file system has that, and otherwise ".kspmv-PID-N.tmp", removed by a
  // handler of SIGINT, SIGTERM and SIGHUP (installed where the signal's action is the default;
  // KSPMV_TMPFILE=0 takes this way everywhere, for tests).
  // Anything else (a pipe, a device) is written in place. Throws kspmv::Error if it cannot.
  explicit TextWriter(const std::string& path);
  // Without a successful close() (an exception on the way), the temporary file is removed;
  // nothing else is.
  ~TextWriter();
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  // Room for at least `n` <= 4096 bytes; write them and pass the end to commit().
  char* space(std::size_t n) {
    if (capacity_ - used_ < n) flush();
    return buf_.get() + used_;
  }
  void commit(char* end) { used_ = static_cast<std::size_t>(end - buf_.get()); }
  void write(std::string_view s) { commit(std::copy(s.begin(), s.end(), space(s.size()))); }

  // Flushes, closes and (for a regular file) renames the temporary file over the target;
  // throws kspmv::Error on a write error.
  void close();

 private:
  void flush();
  // Gives the complete unnamed file the temporary name that close() renames over the target.
  void link_unnamed();
  [[noreturn]] void fail(const std::string& what);

  std::string path_;      // as messages name it
  std::string target_;    // the file replaced on close(); empty when writing in place
  std::string temp_;      // the named temporary file while it exists
  int temp_slot_ = -1;    // its registration for removal by a signal
  bool unnamed_ = false;  // fd_ is an O_TMPFILE file, not linked yet
  int fd_ = -1;
  gzFile_s* gz_ = nullptr;
  std::unique_ptr<char[]> buf_;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
};

}  // namespace kspmv::io::detail
